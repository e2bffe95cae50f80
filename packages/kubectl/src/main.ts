/** bin/kubectl: kubeling's kubectl. */
import { run } from './cli.js';

const code = await run(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env });
process.exitCode = code;
