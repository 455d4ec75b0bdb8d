/**
 * The contract's charge of a call at the test plan's price (400 paise a minute):
 * `ceil(seconds * price_per_minute_paise / 60)`, with binary float noise rounded away first (to
 * the millionth of a paisa), so that it cannot add a paisa the contract does not: 9.3 * 400 / 60
 * is 62.00000000000001 in floats, and 5.3 + 15.1 is 20.400000000000002; 62 and 136 exactly.
 */
export function contractCallCost(seconds: number, pricePerMinutePaise = 400): number {
  return Math.ceil(Math.round((seconds * pricePerMinutePaise * 1e6) / 60) / 1e6);
}
