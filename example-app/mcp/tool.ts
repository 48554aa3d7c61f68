// What a tool is in this app: a name, the scopes it needs, a zod input schema with descriptions a model can act on,
// and a function of the signed-in user's company. Results are JSON, as text and as structured content.
import type { AppDb } from '../db/database';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ServiceError } from '../services/errors';

export interface ToolContext {
  db: AppDb;
  userId: string;
  companyId: number;
  /** Renders a document through the document renderer, with a token exchanged for it (renderer/client.ts). */
  renderDocument(documentId: number): Promise<unknown>;
}

export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  /**
   * Every scope the tool needs: the one of what it does, and the read scope of every kind of record it returns or
   * reveals (a write tool that answers with the record it wrote reads it too). A token that lacks any of them
   * neither sees nor can call the tool.
   */
  scopes: readonly string[];
  input: Shape;
  readOnly: boolean;
  destructive?: boolean;
  run(context: ToolContext, args: z.infer<z.ZodObject<Shape>>): unknown;
}

/** Keeps each definition's argument types tied to its own schema. */
export function defineTool<Shape extends z.ZodRawShape>(definition: ToolDefinition<Shape>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

export function toolResult(data: unknown): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(data, null, 2) }],
    structuredContent: data as Record<string, unknown>,
  };
}

/** A problem with the request that the model can fix: reported as a tool error, not a protocol error. */
export function toolError(error: unknown): CallToolResult {
  if (error instanceof ServiceError)
    return { isError: true, content: [{ type: 'text', text: error.message }] };
  throw error;
}

// Shared pieces of input schemas.
export const id = (what: string) => z.number().int().positive().describe(`The id of the ${what}.`);
export const limit = z
  .number()
  .int()
  .min(1)
  .max(100)
  .default(20)
  .describe('How many items to return (1-100, default 20).');
export const offset = z
  .number()
  .int()
  .min(0)
  .default(0)
  .describe('How many items to skip, for paging (default 0).');
export const isoDate = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'Use the format YYYY-MM-DD.')
    .refine((value) => !Number.isNaN(Date.parse(value)), 'Not a real date.')
    .describe(`${what}, as YYYY-MM-DD.`);
export const minorUnits = (what: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(1_000_000_000_00)
    .describe(`${what}, in minor units of the company currency (cents: 12.50 EUR is 1250).`);
export const vatRate = z
  .number()
  .int()
  .min(0)
  .max(10_000)
  .describe('VAT rate in basis points: 2000 is 20 %, 550 is 5.5 %, 0 for none.');
export const shortText = (what: string, max = 200) => z.string().trim().min(1).max(max).describe(what);
export const email = z.string().trim().email().max(254).describe('An email address.');
