// The web application's query strings and form bodies, declared once as TypeBox schemas (issue 8,
// typed boundaries): Fastify validates each request against its route's schema, and the type
// provider gives the handler `request.query` / `request.body` with these types, no cast.
//
// The schemas say the shape (which fields, text or list) and a hard bound at the size of a whole
// form body (64 KiB). The rules a person can break (a key name too long, too many statuses, a bad
// date) stay in the core functions, which answer in French next to the field; a request that
// breaks a schema was not sent by our pages and gets the generic "Requête invalide" page.
import type { TSchema } from '@fastify/type-provider-typebox';
import { Type } from '../json-schema.js';

export const FORM_BODY_LIMIT = 64 * 1024;

/** One text field, at most the size of a form body. */
const text = () => Type.Optional(Type.String({ maxLength: FORM_BODY_LIMIT }));
/** Checkboxes of one name: a list (a single box ticked arrives as a one-item list). */
const ticked = () =>
  Type.Optional(Type.Array(Type.String({ maxLength: FORM_BODY_LIMIT }), { maxItems: FORM_BODY_LIMIT }));
/** Every form carries its CSRF token; other fields are dropped, never passed on. */
const form = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object({ _csrf: text(), ...fields }, { additionalProperties: false });
const query = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object(fields, { additionalProperties: false });

export const LoginQuery = query({ next: text(), signup: text() });
export const LoginForm = form({ email: text(), password: text(), next: text() });
export const SignUpForm = form({ organization: text(), email: text(), password: text() });
export const SwitchOrganizationForm = form({ slug: text() });

export const KeysQuery = query({ welcome: text(), revoked: text() });
export const RevokeQuery = query({ prefix: text() });
export const CreateKeyForm = form({ name: text() });
export const RevokeKeyForm = form({ prefix: text() });

export const SettingsQuery = query({ saved: text() });
export const ReportSettingsForm = form({ excluded: ticked(), deductions: ticked() });

/** `granularity` and `compare` (PC1) are checked by the page, and answered next to their field. */
export const RevenueQuery = query({ from: text(), to: text(), granularity: text(), compare: text() });

/** The « Produits » page (issue 27): `group`, `compare` and `sort` are checked by the page. */
export const ProductsQuery = query({
  from: text(),
  to: text(),
  group: text(),
  compare: text(),
  sort: text(),
});

export const AddStoreForm = form({ address: text() });
export const ConnectStoreForm = form({
  platform: text(),
  address: text(),
  consumer_key: text(),
  consumer_secret: text(),
  // Shopify (issue 21): a token, or a client id and secret; the app's webhook secret.
  access_token: text(),
  client_id: text(),
  client_secret: text(),
  webhook_secret: text(),
});
export const StoreActionForm = form({ address: text(), remove_orders: text() });
