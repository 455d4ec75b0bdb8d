import { expect } from 'chai';
import { maskPii, maskPiiDeep, passesLuhn } from '../../domain/privacy/pii-mask';

describe('Masking personal identifiers (call.data_storage everything_except_pii)', () => {
  it('masks Indian phone numbers in the ways they are written and transcribed', () => {
    for (const written of ['+919876543210', '+91 98765 43210', '98765-43210', '9876543210', '09876543210', '919876543210', '011 2345 6789', '+14155550123'])
      expect(maskPii(`call me on ${written} please`), written).to.equal('call me on [phone] please');
  });

  it('masks card numbers that pass the Luhn check, and leaves other long numbers', () => {
    expect(passesLuhn('4111111111111111')).to.equal(true);
    expect(passesLuhn('4111111111111112')).to.equal(false);
    expect(maskPii('card 4111 1111 1111 1111 exp 12/29')).to.equal('card [card] exp 12/29');
    expect(maskPii('card 5500-0000-0000-0004')).to.equal('card [card]');
    expect(maskPii('tracking 4111111111111112')).to.equal('tracking 4111111111111112');
  });

  it('masks Aadhaar numbers, PANs and emails', () => {
    expect(maskPii('my aadhaar is 2345 6789 0123')).to.equal('my aadhaar is [aadhaar]');
    expect(maskPii('aadhaar 234567890123.')).to.equal('aadhaar [aadhaar].');
    expect(maskPii('PAN ABCPE1234F and abcpe1234f')).to.equal('PAN [pan] and [pan]');
    expect(maskPii('mail asha.rao+bank@example.co.in now')).to.equal('mail [email] now');
  });

  it('keeps what is not an identifier: amounts, dates, order numbers, times', () => {
    const text = 'Order 12345 of Rs 1,299 on 2024-05-01 at 10:30, pin 560001, OTP 4821';
    expect(maskPii(text)).to.equal(text);
    expect(maskPii('order 12345 9876543210')).to.equal('order 12345 [phone]');
  });

  it('masks every string and identifier-like number inside JSON values', () => {
    const masked = maskPiiDeep({ to: '+919876543210', n: 9876543210, ok: 42, list: ['a@b.co', { pan: 'ABCPE1234F' }], flag: true, none: null });
    expect(masked).to.deep.equal({ to: '[phone]', n: '[phone]', ok: 42, list: ['[email]', { pan: '[pan]' }], flag: true, none: null });
  });
});
