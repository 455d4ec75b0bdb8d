import type { Request } from 'express';
import { expect } from 'chai';
import { sourceAddress } from '../../api/auth/address-limits';

/** The address per-address limits count (decision 0172). */
describe('sourceAddress', () => {
  const of = (ip: string) => sourceAddress({ ip, socket: {} } as unknown as Request);

  it('an IPv4 address as it is, and an IPv4-mapped IPv6 address as its IPv4 one', () => {
    expect(of('203.0.113.9')).to.equal('203.0.113.9');
    expect(of('::ffff:203.0.113.9')).to.equal('203.0.113.9');
  });

  it('an IPv6 address by its /64, however it is written', () => {
    expect(of('2001:db8:0:1::5')).to.equal('2001:db8:0:1::/64');
    expect(of('2001:0db8:0000:0001:ffff:1:2:3')).to.equal('2001:db8:0:1::/64');
    expect(of('2001:DB8::1')).to.equal('2001:db8:0:0::/64');
    expect(of('::1')).to.equal('0:0:0:0::/64');
    expect(of('2001:db8:0:2::5')).to.not.equal(of('2001:db8:0:1::5'));
  });
});
