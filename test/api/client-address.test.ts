/**
 * Whom the Node server counts a portal request against (adapters/_node/client-address.ts):
 * its connection's address, or behind a proxy the operator trusts
 * (TRUSTED_PROXIES), the address that proxy appended to X-Forwarded-For;
 * never anything a client wrote itself.
 */
import { describe, expect, it } from 'vitest';
import { clientAddress, trustedProxiesFrom } from '../../adapters/_node/client-address.ts';

describe('the client address behind trusted proxies', () => {
  const varnish = trustedProxiesFrom('127.0.0.1, ::1');
  const chain = trustedProxiesFrom('127.0.0.1 10.0.0.0/8');

  it.each([
    ['no proxy trusted: the connection, whatever the header says', '127.0.0.1', '203.0.113.9', null, '127.0.0.1'],
    ['an untrusted peer: its own address, the header ignored', '198.51.100.4', '203.0.113.9', varnish, '198.51.100.4'],
    ['a trusted proxy: the address it appended', '127.0.0.1', '203.0.113.9', varnish, '203.0.113.9'],
    ['a trusted proxy over IPv6 and IPv4-mapped', '::ffff:127.0.0.1', '203.0.113.9', varnish, '203.0.113.9'],
    ['a client’s own X-Forwarded-For is never read', '127.0.0.1', '10.9.9.9, 203.0.113.9', varnish, '203.0.113.9'],
    ['a chain of trusted proxies is read past', '127.0.0.1', '203.0.113.9, 10.1.2.3', chain, '203.0.113.9'],
    [
      'a spoofed entry left of the chain is never read',
      '127.0.0.1',
      '192.0.2.1, 203.0.113.9, 10.1.2.3',
      chain,
      '203.0.113.9',
    ],
    ['a trusted proxy without the header: the proxy', '127.0.0.1', undefined, varnish, '127.0.0.1'],
    ['garbage where an address should be: the last proxy', '127.0.0.1', 'not-an-address', varnish, '127.0.0.1'],
    ['an IPv6 client', '::1', '2001:db8::7', varnish, '2001:db8::7'],
  ] as const)('%s', (_what, peer, forwarded, trusted, expected) => {
    expect(clientAddress(peer, forwarded, trusted)).toBe(expected);
  });

  it('reads TRUSTED_PROXIES as addresses and ranges, none when empty, and refuses anything else in one line', () => {
    expect(trustedProxiesFrom(undefined)).toBeNull();
    expect(trustedProxiesFrom(' ')).toBeNull();
    expect(trustedProxiesFrom('10.0.0.0/8,fd00::/8')!.check('10.200.0.1')).toBe(true);
    for (const bad of ['localhost', '10.0.0.0/33', '::1/129', '1.2.3.4/8/8', '10.0.0.0/x']) {
      expect(() => trustedProxiesFrom(bad), bad).toThrow(
        /^Expected TRUSTED_PROXIES to be addresses or ranges .*, got "/,
      );
    }
  });
});
