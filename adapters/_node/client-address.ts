/**
 * Who a request came from, for the portal's per-client limits, on the Node
 * server. Its connection's address, unless that is a proxy the operator
 * named (TRUSTED_PROXIES: addresses and ranges, none by default): then the
 * address that proxy appended to `X-Forwarded-For` (Varnish appends its
 * client's), read from the right past any further trusted proxy. Entries to
 * the left of the first untrusted one are the client's own words and never
 * read, so a client cannot choose whom it is counted as.
 */
import net from 'node:net';

/** The proxies whose `X-Forwarded-For` is believed; null: none (every client is its connection's address). */
export type TrustedProxies = net.BlockList | null;

const familyOf = (address: string) => (net.isIP(address) === 6 ? 'ipv6' : 'ipv4');
/** `::ffff:127.0.0.1` (an IPv4 client on a dual-stack socket) as `127.0.0.1`, so one client has one address. */
const plain = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

/**
 * TRUSTED_PROXIES: addresses and ranges (`127.0.0.1`, `10.0.0.0/8`, `::1`,
 * `fd00::/8`) separated by commas or spaces; empty or unset: none. A
 * RangeError in one line for anything else.
 */
export function trustedProxiesFrom(value: string | undefined): TrustedProxies {
  const entries = (value ?? '').split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) return null;
  const list = new net.BlockList();
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = net.isIP(address);
    const prefix = bits === undefined ? null : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!family || rest.length > 0 || Number.isNaN(prefix) || (prefix !== null && prefix > (family === 6 ? 128 : 32))) {
      throw new RangeError(
        `Expected TRUSTED_PROXIES to be addresses or ranges (such as 127.0.0.1, 10.0.0.0/8, ::1) separated by commas, got ${JSON.stringify(entry)}`,
      );
    }
    if (prefix === null) list.addAddress(address, familyOf(address));
    else list.addSubnet(address, prefix, familyOf(address));
  }
  return list;
}

/** Whether `address` is one of the trusted proxies. */
const isTrusted = (trusted: net.BlockList, address: string) =>
  net.isIP(address) !== 0 && trusted.check(address, familyOf(address));

/**
 * The client's address: `peer` (the connection's), or, when it is
 * a trusted proxy, what the proxies appended to `forwardedFor`.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  let client = plain(peer);
  if (!trusted || !isTrusted(trusted, client) || !forwardedFor) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plain(hops[i].trim());
    if (net.isIP(hop) === 0) break; // not an address: the last proxy's view is all there is
    client = hop;
    if (!isTrusted(trusted, hop)) break;
  }
  return client;
}
