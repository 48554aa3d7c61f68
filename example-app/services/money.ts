// Money: integer minor units and a currency; VAT in basis points. Totals are computed here and nowhere else.

/** One line's amounts, rounded to the minor unit half away from zero. */
export function lineAmounts(
  quantity: number,
  unitPrice: number,
  vatRate: number,
): { net: number; vat: number; total: number } {
  const net = Math.round(quantity * unitPrice);
  const vat = Math.round((net * vatRate) / 10_000);
  return { net, vat, total: net + vat };
}

/** The totals of a document: sums of the rounded lines, so the lines always add up to the total shown. */
export function documentTotals(lines: ReadonlyArray<{ net: number; vat: number }>): {
  subtotal: number;
  vat_total: number;
  total: number;
} {
  const subtotal = lines.reduce((sum, line) => sum + line.net, 0);
  const vatTotal = lines.reduce((sum, line) => sum + line.vat, 0);
  return { subtotal, vat_total: vatTotal, total: subtotal + vatTotal };
}

/** "1234.50 EUR" for a human reading a generated document. */
export function formatMoney(minor: number, currency: string): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`;
}
