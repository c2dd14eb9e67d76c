/** Who a credential (a static token or an identity provider's JWT) stands for, with its allow/deny rules. */
export interface Principal {
  /** The token's name (what audit records and logs show). */
  readonly name: string;
  /**
   * Which credential this is: a digest of a static token's name and secret (`t.…`), or of an identity provider's
   * issuer and the token's subject (`j.<issuer digest>.…`). Sessions, streams and calls are bound to it, so a token
   * rotated under the same name is another credential.
   */
  readonly credential: string;
  readonly allow: readonly string[] | undefined;
  readonly deny: readonly string[];
}
