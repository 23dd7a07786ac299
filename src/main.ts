// `node dist/src/main.js` (what `npm start` runs) is `sales-metrics serve`.
import { runCli } from './cli/main.js';

process.exitCode = await runCli(['serve']);
