import https from "node:https";
import { createSecureContext, type SecureContext } from "node:tls";

/** What a TLS connection is made with; a pool serves only requests with the same. */
export type TlsIdentity = Pick<
  https.RequestOptions,
  "ca" | "cert" | "key" | "pfx" | "passphrase" | "rejectUnauthorized" | "servername"
>;
const TLS_FIELDS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const;

/** The TLS identity in request options (as KubeConfig.applyToHTTPSOptions fills them in). */
export function tlsOf(options: https.RequestOptions): TlsIdentity {
  const tls: TlsIdentity = {};
  for (const field of TLS_FIELDS) if (options[field] !== undefined) Object.assign(tls, { [field]: options[field] });
  return tls;
}

// KubeConfig decodes certificates and keys into new Buffers on every call: compared by content.
export function sameTls(a: TlsIdentity, b: TlsIdentity): boolean {
  return TLS_FIELDS.every((field) => sameValue(a[field], b[field]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  return false;
}

/**
 * The secure context of one TLS identity, shared by every agent (and so every connection) made
 * with it. Without it Node parses the CA, certificate and key again for every new connection
 * (tls.connect makes a context from the options), which costs a sync worker with a hundred
 * watches seconds of CPU.
 */
export function secureContextOf(tls: TlsIdentity): SecureContext {
  const { rejectUnauthorized: _r, servername: _s, ...material } = tls;
  return createSecureContext(material);
}

/** An HTTPS agent whose connections are made with `tls` and its `context` (see secureContextOf). */
export function tlsAgent(
  tls: TlsIdentity,
  context: SecureContext,
  pool: { keepAlive: boolean; maxSockets?: number },
): https.Agent {
  const { rejectUnauthorized, servername } = tls;
  return new https.Agent({
    ...pool,
    ...tls,
    secureContext: context,
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
  });
}
