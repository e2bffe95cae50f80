// A container healthcheck: exit 0 when the URL answers 2xx. Health endpoints
// only, so the serving certificate is not verified here.
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';

const url = process.argv[2];
const get = url.startsWith('https:') ? httpsGet : httpGet;
const req = get(url, { rejectUnauthorized: false, timeout: 3000 }, (res) => {
  res.resume();
  process.exit(res.statusCode >= 200 && res.statusCode < 300 ? 0 : 1);
});
req.on('error', () => process.exit(1));
req.on('timeout', () => {
  req.destroy();
  process.exit(1);
});
