// Every tool of the reference app, by area of the spec's scope table.
import type { ToolDefinition } from '../tool';
import { bankTools, companyTools, documentTools, profileTools } from './account';
import { invoiceTools } from './invoices';
import { clientTools, productTools, prospectTools } from './records';

export const ALL_TOOLS: readonly ToolDefinition[] = [
  ...invoiceTools,
  ...clientTools,
  ...productTools,
  ...companyTools,
  ...bankTools,
  ...profileTools,
  ...prospectTools,
  ...documentTools,
];

export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(
  ALL_TOOLS.map((tool) => [tool.name, tool]),
);
