/**
 * Credit packs (contract, "Billing": larger packs include bonus credits). A pack's price is
 * its value before GST: the customer pays the value plus 18% GST and receives value + bonus
 * in credits. A custom top-up buys exactly its value in credits, without bonus.
 */
export interface CreditPack {
  id: string;
  name: string;
  /** What the customer pays before GST, and the credits it buys before the bonus. */
  valuePaise: number;
  bonusPaise: number;
}

export const CREDIT_PACKS: readonly CreditPack[] = [
  { id: 'pack_500', name: '₹500 pack', valuePaise: 50_000, bonusPaise: 0 },
  { id: 'pack_1000', name: '₹1,000 pack', valuePaise: 100_000, bonusPaise: 5_000 },
  { id: 'pack_2500', name: '₹2,500 pack', valuePaise: 250_000, bonusPaise: 25_000 },
  { id: 'pack_5000', name: '₹5,000 pack', valuePaise: 500_000, bonusPaise: 75_000 },
  { id: 'pack_10000', name: '₹10,000 pack', valuePaise: 1_000_000, bonusPaise: 200_000 },
];

/** A custom top-up's value: ₹100 to ₹5,00,000. */
export const MIN_CUSTOM_TOPUP_PAISE = 10_000;
export const MAX_CUSTOM_TOPUP_PAISE = 50_000_000;

export function packOf(id: string): CreditPack | undefined {
  return CREDIT_PACKS.find((pack) => pack.id === id);
}
