/** Who a credential (a static token or an identity provider's JWT) stands for, with its allow/deny rules. */
export interface Principal {
  /** The token's name (what audit records and logs show). */
  readonly name: string;
  readonly allow: readonly string[] | undefined;
  readonly deny: readonly string[];
}
