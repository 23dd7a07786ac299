// The routes' schema compilers, built and run when first needed instead of at start (issue 28):
// loading ajv and compiling every route's schemas was a few hundred milliseconds of each start,
// before the port opened. Each validator is the one Fastify makes by default (its own compiler,
// @fastify/ajv-compiler, with the server's ajv options), compiled by the first request that needs
// it or, once the server listens, in the background, one a turn of the event loop: every route
// validates its input exactly as before. The serializers likewise (no route of ours declares a
// response schema: the documented responses are in `config.docResponses`, src/api/openapi.ts).
import { createRequire } from 'node:module';

interface RouteSchema {
  readonly schema: unknown;
  readonly method: string;
  readonly url: string;
  readonly httpPart?: string;
}
type Validate = ((data: unknown, context?: object) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Compile<F> = (route: RouteSchema) => F;
type CompilerFactory<F> = (externalSchemas: unknown, options: unknown) => Compile<F>;

/** Fastify's default compiler factory `name`, resolved from Fastify's package as Fastify does. */
function fastifyDefault<F>(name: string): CompilerFactory<F> {
  const load = createRequire(import.meta.resolve('fastify'))(name) as () => CompilerFactory<F>;
  return load();
}

export class LazyCompilers {
  private validators: CompilerFactory<Validate> | undefined;
  private serializers: CompilerFactory<unknown> | undefined;
  /** Validators made, to be compiled by compileRest() unless a request has needed them first. */
  private waiting: (() => unknown)[] = [];
  private uncompiled = 0;

  /** Fastify's `schemaController.compilersFactory.buildValidator`. */
  readonly buildValidator = (externalSchemas: unknown, ajvOptions: unknown): Compile<Validate> => {
    let compile: Compile<Validate> | undefined; // an Ajv instance, made for the first schema compiled
    const compilerOf = () => (compile ??= this.validatorCompiler()(externalSchemas, ajvOptions));
    return (route) => {
      let validate: Validate | undefined;
      const compiled = (): Validate => {
        if (validate === undefined) {
          validate = compilerOf()(route);
          this.uncompiled--;
        }
        return validate;
      };
      this.uncompiled++;
      this.waiting.push(compiled);
      const lazy: Validate = (data, context) => {
        const real = compiled();
        const result = context === undefined ? real(data) : real(data, context);
        lazy.errors = real.errors; // where Fastify reads why the input was refused
        return result;
      };
      // Fastify passes the request as the parent of the value when the validator has a schemaEnv
      // (so that ajv may coerce the value itself): read when the first request is validated.
      Object.defineProperty(lazy, 'schemaEnv', { get: () => compiled().schemaEnv });
      return lazy;
    };
  };

  /** Fastify's `schemaController.compilersFactory.buildSerializer`: loaded for the first response schema. */
  readonly buildSerializer = (externalSchemas: unknown, options: unknown): Compile<unknown> => {
    let compile: Compile<unknown> | undefined;
    return (route) =>
      (compile ??= (this.serializers ??= fastifyDefault('@fastify/fast-json-stringify-compiler'))(
        externalSchemas,
        options,
      ))(route);
  };

  /**
   * Loads Fastify's validator compiler (ajv and its plugins) now, without compiling any schema:
   * about a tenth of a second of modules that the first request with a schema otherwise loaded,
   * at a starting server's busiest moment (issue 28, profiled: just as its first build began).
   */
  loadValidators(): void {
    this.validatorCompiler();
  }

  private validatorCompiler(): CompilerFactory<Validate> {
    return (this.validators ??= fastifyDefault<Validate>('@fastify/ajv-compiler'));
  }

  /** How many validators are still to be compiled. */
  get pending(): number {
    return this.uncompiled;
  }

  /**
   * Compiles, one a turn of the event loop (a few milliseconds each), the validators no request
   * has needed yet; `failed` hears of a schema that does not compile (its route answers 500).
   * While `busy()` (requests under way) it waits: compiled right as the server listened, they
   * took a quarter of a second of the thread just when the first reports came (issue 28: the very
   * first answer after a restart, profiled), and a request compiles what it needs itself anyway.
   */
  compileRest(failed: (error: unknown) => void, busy: () => boolean = () => false): void {
    if (this.waiting.length === 0) return;
    if (busy()) {
      setTimeout(() => this.compileRest(failed, busy), IDLE_LOOK_MS).unref();
      return;
    }
    const next = this.waiting.shift() as () => unknown;
    try {
      next();
    } catch (error) {
      failed(error);
    }
    setImmediate(() => this.compileRest(failed, busy));
  }
}

/** How often compileRest looks again whether the server is idle. */
const IDLE_LOOK_MS = 50;
