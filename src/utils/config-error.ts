/** A config that cannot be used: the message names the file or key and says what to change. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
