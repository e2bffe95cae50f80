/** The keeper process of a runner's etcd (see runner-etcd.ts): `keeper <runner pid> <folder>`. */
import { keep } from './runner-etcd.js';

await keep(Number(process.argv[2]), process.argv[3]!);
