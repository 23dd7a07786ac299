// A browser-like client for the web application over real HTTP: a cookie jar, forms' CSRF
// tokens, posts with the Origin a browser sends (the abuse tests of issue 7).
import assert from 'node:assert/strict';

export const PASSWORD = 'long enough password';

/** A browser-like client: a cookie jar, a form's token, posts with the headers a browser sends. */
export class Client {
  readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair?.indexOf('=') ?? -1;
      if (pair && at > 0) this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(`${this.base}${path}`, {
      redirect: 'manual',
      headers: { cookie: this.cookieHeader, ...headers },
    });
    this.keep(response);
    return response;
  }

  /** The CSRF token of the form on `path`. */
  async token(path: string): Promise<string> {
    const page = await (await this.get(path)).text();
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
    assert.ok(token, `a token on ${path}`);
    return token;
  }

  /** A multipart form with one file, as the import form sends it (token first). */
  async upload(path: string, fields: Record<string, string>, file: { name: string; content: Blob }) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', file.content, file.name);
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.cookieHeader, origin: this.base },
      body: form,
    });
    this.keep(response);
    return response;
  }

  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = { origin: this.base },
  ): Promise<Response> {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader,
        'content-type': 'application/x-www-form-urlencoded',
        ...headers,
      },
      body: new URLSearchParams(fields).toString(),
    });
    this.keep(response);
    return response;
  }

  async login(email: string, password = PASSWORD, next?: string): Promise<Response> {
    const token = await this.token(next ? `/login?next=${encodeURIComponent(next)}` : '/login');
    const page = await (await this.get(next ? `/login?next=${encodeURIComponent(next)}` : '/login')).text();
    const hiddenNext = /name="next" value="([^"]*)"/.exec(page)?.[1] ?? '';
    return this.post('/login', { _csrf: token, email, password, next: decode(hiddenNext) });
  }
}

export const decode = (text: string): string =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<');
