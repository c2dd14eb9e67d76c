/**
 * GET of an identity provider's small JSON documents (OIDC discovery, the
 * JWKS), at most `maxBytes`, counted as they arrive: anyone can make the
 * gateway fetch them (a made-up JWT does), so a hostile or broken endpoint
 * must not make it buffer an endless body. Used for discovery directly and
 * by jose for the key set (its `customFetch`).
 */

/** Far more than any real discovery document or key set (a few KB). */
export const MAX_IDP_DOCUMENT_BYTES = 1024 * 1024;

export function boundedFetch(maxBytes: number) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(url, init);
    const tooLarge = () =>
      new Error(
        `${String(url)} answered with more than ${maxBytes} bytes, more than a discovery document or key set has; check the identity provider's URL`,
      );
    if (Number(res.headers.get('content-length')) > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        if (bytes > maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge();
        }
        chunks.push(value);
      }
    }
    const body = [204, 205, 304].includes(res.status) ? null : Buffer.concat(chunks, bytes);
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
