// The bench's `echo` tool as a plugin module, for scenarios that run the real CLI
// (`a2e-gateway serve --config …` with `plugins: [{module: this file}]`).
// `whoami` answers the pid of the process that ran the call (to see every worker serve).
export default function echoPlugin() {
  return {
    name: 'bench-echo',
    listTools: () => [
      {
        name: 'echo',
        description: 'Echo the given text back',
        input_parameters: [{ name: 'text', type: 'string', description: 'Text to echo', required: true }],
        output_parameters: [{ name: 'text', type: 'string', description: 'The same text' }],
      },
      { name: 'whoami', description: 'Answer the pid of the gateway process that ran the call', input_parameters: [] },
    ],
    executeTool: async (name, args) => (name === 'echo' ? { text: args.text } : { pid: process.pid }),
  };
}
