import { expect } from 'chai';
import { financialYearOf, gstFor, invoiceNumber, percentOf, rupees, taxTotal } from '../../domain/billing/gst';
import { summarize } from '../../domain/billing/summary';
import { CREDIT_PACKS } from '../../domain/billing/packs';
import { paymentSignature, RazorpayGateway } from '../../providers/payments/gateway';
import { planOf } from '../../domain/billing/plans';
import { loadConfig } from '../../config/env';

describe('billing: GST, invoice numbers, the balance summary', () => {
  describe('the tax split', () => {
    it('is CGST 9% + SGST 9% in the platform state, IGST 18% elsewhere, and intra-state without a KYC state', () => {
      expect(gstFor(100_000, 'KA', 'KA')).to.deep.equal({ split: 'intra', place_of_supply: 'KA', cgst_paise: 9_000, sgst_paise: 9_000, igst_paise: 0 });
      expect(gstFor(100_000, 'MH', 'KA')).to.deep.equal({ split: 'inter', place_of_supply: 'MH', cgst_paise: 0, sgst_paise: 0, igst_paise: 18_000 });
      expect(gstFor(100_000, null, 'KA')).to.include({ split: 'intra', place_of_supply: 'KA' });
      expect(gstFor(100_000, 'KA', 'TN').split).to.equal('inter');
    });

    it('rounds each line half up to the paisa, so CGST equals SGST and may differ from IGST by a paisa', () => {
      expect(percentOf(10_005, 9)).to.equal(900); // 900.45
      expect(percentOf(10_005, 18)).to.equal(1801); // 1800.9
      expect(percentOf(10_050, 9)).to.equal(905); // 904.5 -> up
      expect(percentOf(1, 18)).to.equal(0); // 0.18
      expect(percentOf(3, 18)).to.equal(1); // 0.54
      const intra = gstFor(10_005, 'KA', 'KA');
      expect([intra.cgst_paise, intra.sgst_paise, taxTotal(intra)]).to.deep.equal([900, 900, 1800]);
      expect(taxTotal(gstFor(10_005, 'DL', 'KA'))).to.equal(1801);
      expect(percentOf(50_000_000, 18)).to.equal(9_000_000);
    });
  });

  describe('financial years and invoice numbers', () => {
    it('turns over at midnight on 1 April in India, not UTC', () => {
      expect(financialYearOf(new Date('2027-03-31T18:29:59.999Z'))).to.equal('2026-27'); // 23:59:59 IST on 31 March
      expect(financialYearOf(new Date('2027-03-31T18:30:00Z'))).to.equal('2027-28'); // 00:00 IST on 1 April
      expect(financialYearOf(new Date('2026-11-21T10:00:00Z'))).to.equal('2026-27');
      expect(financialYearOf(new Date('2026-01-01T00:00:00Z'))).to.equal('2025-26');
      expect(financialYearOf(new Date('2099-12-31T00:00:00Z'))).to.equal('2099-00');
    });

    it('numbers invoices VA/yy-yy/nnnnnn, within the 16 characters GST allows', () => {
      expect(invoiceNumber('2026-27', 1)).to.equal('VA/26-27/000001');
      expect(invoiceNumber('2026-27', 999_999)).to.have.length.at.most(16);
      expect(invoiceNumber('2099-00', 42)).to.equal('VA/99-00/000042');
    });

    it('prints rupees with Indian digit grouping', () => {
      expect(rupees(11_800_000)).to.equal('1,18,000.00');
      expect(rupees(118_000)).to.equal('1,180.00');
      expect(rupees(5)).to.equal('0.05');
      expect(rupees(-123_456_789)).to.equal('-12,34,567.89');
    });
  });

  describe('the balance summary', () => {
    const starter = planOf('starter');
    it('is low below 10 minutes at the price, not at exactly 10', () => {
      expect(summarize(4_000, starter)).to.deep.equal({
        credits_paise: 4_000,
        price_per_minute_paise: 400,
        minutes_left: 10,
        low_balance: false,
        plan_name: 'Starter',
      });
      expect(summarize(3_999, starter)).to.include({ minutes_left: 9.99, low_balance: true });
      expect(summarize(3_500, planOf('growth'))).to.include({ minutes_left: 10, low_balance: false, plan_name: 'Growth' });
      expect(summarize(2_999, planOf('scale'))).to.include({ minutes_left: 9.99, low_balance: true });
    });

    it('never promises a minute the balance cannot pay, and shows none at or below zero', () => {
      expect(summarize(50_000, starter).minutes_left).to.equal(125);
      expect(summarize(401, starter).minutes_left).to.equal(1);
      expect(summarize(0, starter)).to.include({ minutes_left: 0, low_balance: true });
      expect(summarize(-250, starter)).to.include({ credits_paise: -250, minutes_left: 0, low_balance: true });
    });
  });

  it('larger packs carry more bonus, in proportion too', () => {
    for (let i = 1; i < CREDIT_PACKS.length; i++) {
      const [smaller, larger] = [CREDIT_PACKS[i - 1]!, CREDIT_PACKS[i]!];
      expect(larger.valuePaise).to.be.greaterThan(smaller.valuePaise);
      expect(larger.bonusPaise / larger.valuePaise).to.be.greaterThan(smaller.bonusPaise / smaller.valuePaise);
    }
  });

  it("verifies the gateway's signature of order_id|payment_id, and nothing else", () => {
    const gateway = new RazorpayGateway({ baseUrl: 'http://127.0.0.1:9', keyId: 'rzp_test', keySecret: 'secret', timeoutMs: 1_000 });
    // Razorpay's documented scheme: hex HMAC-SHA256 of "order_id|razorpay_payment_id" with the key secret.
    const signature = paymentSignature('order_A', 'pay_B', 'secret');
    expect(signature).to.equal('64302fe866b18d796052d1dcbf300cf4e855f198ec279dadef68c28610dd4844');
    expect(gateway.verifyPayment({ orderId: 'order_A', paymentId: 'pay_B', signature })).to.equal(true);
    expect(gateway.verifyPayment({ orderId: 'order_X', paymentId: 'pay_B', signature })).to.equal(false);
    expect(gateway.verifyPayment({ orderId: 'order_A', paymentId: 'pay_C', signature })).to.equal(false);
    expect(gateway.verifyPayment({ orderId: 'order_A', paymentId: 'pay_B', signature: paymentSignature('order_A', 'pay_B', 'other secret') })).to.equal(false);
    expect(gateway.verifyPayment({ orderId: 'order_A', paymentId: 'pay_B', signature: signature.slice(0, 62) })).to.equal(false);
  });

  it('reads the gateway and the seller from the environment (Karnataka and no gateway by default)', () => {
    const defaults = loadConfig({});
    expect(defaults.providers.payments).to.equal(null);
    expect(defaults.billing).to.deep.equal({ sellerName: 'Voice Agents Platform', sellerGstin: null, sellerState: 'KA' });
    const set = loadConfig({
      PAYMENTS_BASE_URL: 'https://api.razorpay.com/',
      RAZORPAY_KEY_ID: 'rzp_live_x',
      RAZORPAY_KEY_SECRET: 's',
      BILLING_SELLER_STATE: 'MH',
      BILLING_SELLER_GSTIN: '27AABCV1234C1Z5',
    });
    expect(set.providers.payments).to.deep.equal({ baseUrl: 'https://api.razorpay.com', keyId: 'rzp_live_x', keySecret: 's', webhookSecret: null });
    expect(set.billing).to.include({ sellerState: 'MH', sellerGstin: '27AABCV1234C1Z5' });
    expect(() => loadConfig({ PAYMENTS_BASE_URL: 'https://api.razorpay.com' })).to.throw(/RAZORPAY_KEY_ID/);
    expect(() => loadConfig({ BILLING_SELLER_STATE: 'Karnataka' })).to.throw(/BILLING_SELLER_STATE/);
  });
});
