/**
 * The contract's charge of a call, `ceil(duration_seconds * price_per_minute_paise / 60)`, worked
 * out in whole tenths of a second (the duration's resolution), so that binary float noise cannot
 * add a paisa the contract does not: 9.3 * 400 / 60 is 62.00000000000001 in floats, 62 exactly.
 */
export function contractCallCost(durationSeconds: number, pricePerMinutePaise = 400): number {
  const tenths = Math.round(durationSeconds * 10);
  return Math.ceil((tenths * pricePerMinutePaise) / 600);
}
