// The public API's request schemas, declared once with TypeBox: Fastify validates each request
// against its route's schema and the type provider types `request.query` from it (issue 8), and
// the OpenAPI description of the API can be produced from the same declarations.
//
// The query string's rules (P1–P7: trimming, ids, dates, zones, limits, a parameter given twice)
// and their French messages (section 10) belong to the parse step (src/query/parse.ts); a schema
// that checked them would answer in a validator's words. So this one states the shape the parse
// step reads: any parameter, each one text or, when repeated, a list of texts.
import { Type, type Static } from '@fastify/type-provider-typebox';

export const TabularQuerystring = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Array(Type.String())]),
);
export type TabularQuerystring = Static<typeof TabularQuerystring>;
