// `sales-metrics`: the operator's command line (SPEC section 12). Every sub-command accepts --json,
// exits 0 on success and non-zero with a clear message on standard error.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { errorFields, isAppError } from '../errors.js';
import { COMMANDS, type CommandContext } from './commands.js';

const USAGE = `Usage : sales-metrics <commande> [options] [--json]

  serve                                              lance l’API (et l’application web)
  migrate                                            crée ou met à jour le schéma
  org create --name N [--currency EUR]               crée une organisation (en essai)
  store add --org SLUG --address URL                 ajoute une boutique (commandes par import de fichiers)
  store connect --org SLUG --platform woocommerce --address URL --consumer-key ck_… --consumer-secret-stdin
                                                     connecte une boutique par son API REST (lecture seule)
  store list --org SLUG                              boutiques connectées : état de la synchronisation
  store sync --org SLUG --address URL                synchronise une boutique maintenant
  store disconnect --org SLUG --address URL [--remove-orders]
  import --org SLUG [--skip-invalid] FICHIER…        importe des commandes (.ndjson, .jsonl, .csv, - pour l’entrée standard)
  key create --org SLUG --name N                     crée une clé API (affichée une seule fois)
  key list --org SLUG                                liste les clés
  key revoke --org SLUG --prefix P                   révoque une clé
  settings set --org SLUG [--excluded-statuses a,b] [--deductions refunds,taxes,shipping,fees]
  settings show --org SLUG
  subscription set --org SLUG --state trialing|active|stopped [--trial-ends AAAA-MM-JJ]
  user create --org SLUG --email E --password-stdin  donne accès à l’application web (mot de passe sur l’entrée standard)
  user password --org SLUG --email E --password-stdin
                                                     change le mot de passe et ferme les sessions de l’utilisateur

Configuration : variables d’environnement (DATABASE_URL, DATA_DIR…), voir docs/operations.md.`;

export class UsageError extends Error {}

/** node:util parseArgs speaks English; the option it names is kept. */
function argumentError(code: string, message: string): string {
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `option inconnue : ${option}\n\n${USAGE}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return `valeur manquante ou invalide pour l’option ${option}`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return `argument inattendu : ${message.split("'")[1] ?? ''}`;
  return `arguments invalides : ${message}`;
}

export async function runCli(argv: readonly string[]): Promise<number> {
  const json = argv.includes('--json');
  const fail = (message: string, extra: Record<string, unknown> = {}): number => {
    if (json) process.stderr.write(`${JSON.stringify({ error: message, ...extra })}\n`);
    else process.stderr.write(`sales-metrics : ${message}\n`);
    return 1;
  };
  const args = argv.filter((a) => a !== '--json');
  if (args[0] === '--help' || args[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.length === 0) return fail(`commande manquante\n\n${USAGE}`);
  const name = [args[0], args[1]].join(' ');
  const command = COMMANDS[name] ?? COMMANDS[args[0] ?? ''];
  if (!command) return fail(`commande inconnue : « ${args.slice(0, 2).join(' ')} »\n\n${USAGE}`);
  const rest = args.slice(COMMANDS[name] ? 2 : 1);
  try {
    const parsed = parseArgs({
      args: rest,
      options: command.options as ParseArgsConfig['options'],
      allowPositionals: command.positionals ?? false,
      strict: true,
    });
    const config = loadConfig();
    const context: CommandContext = {
      config,
      json,
      values: parsed.values as Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
      print: (result, text) => process.stdout.write(`${json ? JSON.stringify(result) : text}\n`),
      progress: (line) => {
        if (process.stderr.isTTY && !json) process.stderr.write(`\r${line}\x1b[K`);
      },
      warn: (line) => process.stderr.write(`${line}\n`),
    };
    return await command.run(context);
  } catch (error) {
    if (isAppError(error)) return fail(error.message);
    if (error instanceof ConfigError || error instanceof UsageError) return fail(error.message);
    const { code = '' } = errorFields(error);
    if (code.startsWith('ERR_PARSE_ARGS') && error instanceof Error)
      return fail(argumentError(code, error.message));
    return fail(error instanceof Error ? error.message : String(error));
  }
}
