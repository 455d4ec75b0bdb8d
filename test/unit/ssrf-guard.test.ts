import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import { loadConfig } from '../../config/env';
import { BlockedAddressError, blockedRangeOf, checkedAddresses, pinnedLookup, type BlockedRange } from '../../providers/net/ssrf-guard';

/** The SSRF guard of HTTP tools: which addresses are refused, and that a name is resolved once. */
describe('SSRF guard', () => {
  const blocked: [string, BlockedRange][] = [
    // IPv4, each range at both of its ends
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'private'],
    ['100.127.255.255', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.0.0', 'link-local'],
    ['169.254.169.254', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.168.0.0', 'private'],
    ['192.168.255.255', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fc00::', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
    ['fe80::', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['FF0E::1', 'multicast'],
    // IPv6 forms carrying a blocked IPv4 address
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a00:1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:192.168.1.1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
  ];
  for (const [address, range] of blocked) {
    it(`refuses ${address} as ${range}`, () => {
      expect(blockedRangeOf(address)).to.equal(range);
    });
  }

  const allowed = [
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255', // just below 10/8
    '11.0.0.0', // just above 10/8
    '100.63.255.255', // just below 100.64/10
    '100.128.0.0', // just above it
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255', // just below 172.16/12
    '172.32.0.0', // just above it
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255', // just below multicast
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    'fbff:ffff::1', // just below fc00::/7
    'fe00::1', // between fc00::/7 and fe80::/10
    'fe7f::1', // just below fe80::/10
  ];
  for (const address of allowed) {
    it(`allows the public address ${address}`, () => {
      expect(blockedRangeOf(address)).to.equal(null);
    });
  }

  it('judges IPv6 forms carrying a public IPv4 address by that address', () => {
    expect(blockedRangeOf('::ffff:8.8.8.8')).to.equal(null);
    expect(blockedRangeOf('::ffff:808:808')).to.equal(null);
    expect(blockedRangeOf('64:ff9b::1.1.1.1')).to.equal(null);
    expect(blockedRangeOf('2002:808:808::1')).to.equal(null);
  });

  it('treats anything else as a programming error', () => {
    expect(() => blockedRangeOf('localhost')).to.throw(TypeError);
  });

  describe('checkedAddresses', () => {
    const resolver = (answers: Record<string, LookupAddress[]>) => {
      const asked: string[] = [];
      const resolve = async (hostname: string) => {
        asked.push(hostname);
        return answers[hostname] ?? [];
      };
      return { asked, resolve };
    };

    it('answers every address of a public name, asking the resolver once', async () => {
      const { asked, resolve } = resolver({
        'api.example.com': [
          { address: '93.184.216.34', family: 4 },
          { address: '2606:2800:220:1::', family: 6 },
        ],
      });
      const addresses = await checkedAddresses('api.example.com', { allowPrivateNetworks: false, resolve });
      expect(addresses).to.deep.equal([
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::', family: 6 },
      ]);
      expect(asked).to.deep.equal(['api.example.com']);
    });

    it('refuses a name when ANY of its addresses is blocked, naming the name, the address and the range', async () => {
      const { resolve } = resolver({
        'mixed.example.com': [
          { address: '93.184.216.34', family: 4 },
          { address: '10.1.2.3', family: 4 },
        ],
      });
      const error = await checkedAddresses('mixed.example.com', { allowPrivateNetworks: false, resolve }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(BlockedAddressError);
      expect((error as BlockedAddressError).message).to.equal(
        'mixed.example.com resolves to 10.1.2.3, which is a private address; tools may only call public addresses',
      );
      expect(error).to.include({ hostname: 'mixed.example.com', address: '10.1.2.3', range: 'private' });
    });

    it('checks IP literals (IPv6 with or without brackets) without asking the resolver', async () => {
      const { asked, resolve } = resolver({});
      for (const host of ['127.0.0.1', '[::1]', '::1', '[::ffff:169.254.169.254]']) {
        const error = await checkedAddresses(host, { allowPrivateNetworks: false, resolve }).catch((e: unknown) => e);
        expect(error, host).to.be.instanceOf(BlockedAddressError);
      }
      expect((await checkedAddresses('[2001:db8::1]', { allowPrivateNetworks: false, resolve }))[0]).to.deep.equal({ address: '2001:db8::1', family: 6 });
      expect(asked).to.deep.equal([]);
    });

    it('names a refused literal plainly', async () => {
      const error = await checkedAddresses('169.254.169.254', { allowPrivateNetworks: false }).catch((e: unknown) => e);
      expect((error as Error).message).to.equal('169.254.169.254 is a link-local address; tools may only call public addresses');
    });

    it('allows blocked ranges when private networks are allowed, still resolving once', async () => {
      const { asked, resolve } = resolver({ 'intranet.local': [{ address: '10.0.0.5', family: 4 }] });
      expect(await checkedAddresses('intranet.local', { allowPrivateNetworks: true, resolve })).to.deep.equal([{ address: '10.0.0.5', family: 4 }]);
      expect(asked).to.have.length(1);
    });

    it('refuses localhost through the system resolver', async () => {
      const error = await checkedAddresses('localhost', { allowPrivateNetworks: false }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(BlockedAddressError);
      expect((error as BlockedAddressError).range).to.equal('loopback');
    });

    it('passes DNS failures on with their code', async () => {
      const error = await checkedAddresses('no-such-host.invalid', { allowPrivateNetworks: false }).catch((e: unknown) => e);
      expect((error as NodeJS.ErrnoException).code).to.be.oneOf(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME']);
      const empty = await checkedAddresses('nothing.example', { allowPrivateNetworks: false, resolve: async () => [] }).catch((e: unknown) => e);
      expect((empty as NodeJS.ErrnoException).code).to.equal('ENODATA');
    });
  });

  describe('TOOLS_ALLOW_PRIVATE_NETWORKS', () => {
    it('is off unless set, so a fresh deployment is guarded', () => {
      expect(loadConfig({}).toolsAllowPrivateNetworks).to.equal(false);
      expect(loadConfig({ TOOLS_ALLOW_PRIVATE_NETWORKS: '' }).toolsAllowPrivateNetworks).to.equal(false);
    });

    it('reads true and false, and refuses anything else naming the variable', () => {
      expect(loadConfig({ TOOLS_ALLOW_PRIVATE_NETWORKS: 'true' }).toolsAllowPrivateNetworks).to.equal(true);
      expect(loadConfig({ TOOLS_ALLOW_PRIVATE_NETWORKS: '0' }).toolsAllowPrivateNetworks).to.equal(false);
      expect(() => loadConfig({ TOOLS_ALLOW_PRIVATE_NETWORKS: 'sometimes' })).to.throw('TOOLS_ALLOW_PRIVATE_NETWORKS');
    });
  });

  describe('pinnedLookup', () => {
    const addresses = [
      { address: '93.184.216.34', family: 4 as const },
      { address: '2606:2800:220:1::', family: 6 as const },
    ];
    const ask = (options: { family?: number; all?: boolean }) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) => {
        pinnedLookup(addresses)('any.name.at.all', options, (error, address, family) => resolve({ error, address, family }));
      });

    it('answers the checked addresses whatever name is asked', async () => {
      expect(await ask({})).to.deep.equal({ error: null, address: '93.184.216.34', family: 4 });
      expect(await ask({ all: true })).to.deep.include({ error: null, address: addresses });
    });

    it('honours a family, and fails when no checked address has it', async () => {
      expect(await ask({ family: 6 })).to.deep.equal({ error: null, address: '2606:2800:220:1::', family: 6 });
      const ipv4Only = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
        pinnedLookup([addresses[0]])('x', { family: 6 }, (error) => resolve(error));
      });
      expect(ipv4Only?.code).to.equal('ENOTFOUND');
    });
  });
});
