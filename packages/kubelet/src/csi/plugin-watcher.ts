/**
 * The kubelet's plugin manager (kubernetes pkg/kubelet/pluginmanager:
 * pluginwatcher, reconciler, operationexecutor RegisterPlugin): it watches the
 * registration directory (`<root-dir>/plugins_registry/`, made at start) for
 * unix sockets, with fs.watch and a scan each second in case an event is
 * missed. For each new socket it speaks the pluginregistration v1 protocol:
 * GetInfo, then the handler of the plugin's type validates and registers it,
 * and NotifyRegistrationStatus tells the plugin how it went (with upstream's
 * "RegisterPlugin error -- …" messages). A failed registration is tried again
 * with a growing delay; a socket replaced by a new one (another inode or
 * mtime) is deregistered and registered again; a socket that vanished is
 * deregistered. Names starting with `.` are ignored, as upstream does.
 */
import { lstatSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { RegistrationClient, type PluginInfo } from '@kubeling/csi';
import type { Logger } from 'pino';
import type { PluginHandler } from './registration.js';

/** What the watcher needs of a connection to a plugin's registration socket. */
export interface RegistrationConn {
  getInfo(): Promise<PluginInfo>;
  notifyRegistrationStatus(s: { plugin_registered: boolean; error: string }): Promise<void>;
  close(): void;
}

export interface PluginWatcherOptions {
  dir: string;
  /** Handlers by plugin type (`CSIPlugin`). */
  handlers: Record<string, PluginHandler>;
  log: Logger;
  connect?: (socketPath: string) => RegistrationConn;
  scanIntervalMs?: number;
  /** How long GetInfo and NotifyRegistrationStatus may take. */
  rpcTimeoutMs?: number;
}

interface Plugin {
  /** Identifies the socket file: a new socket at the same path is another plugin. */
  key: string;
  name?: string;
  type?: string;
  registered: boolean;
  failures: number;
  retryAt: number;
}

const MAX_RETRY_MS = 60_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: timed out after ${ms}ms`)), ms)))]).finally(() =>
    clearTimeout(t),
  );
}

export class PluginWatcher {
  private readonly plugins = new Map<string, Plugin>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private kickTimer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly o: PluginWatcherOptions) {}

  start(): void {
    mkdirSync(this.o.dir, { recursive: true });
    try {
      this.watcher = watch(this.o.dir, () => this.kick());
      this.watcher.on('error', () => undefined);
    } catch (e) {
      this.o.log.warn({ dir: this.o.dir, err: (e as Error).message }, 'cannot watch the plugin registration directory; scanning it only');
    }
    this.timer = setInterval(() => void this.scan(), this.o.scanIntervalMs ?? 1000);
    this.timer.unref();
    void this.scan();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    if (this.kickTimer) clearTimeout(this.kickTimer);
    await this.scanning;
  }

  /** The plugins registered, by socket path (for tests and debugging). */
  registered(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [p, pl] of this.plugins) if (pl.registered && pl.name) out.set(p, pl.name);
    return out;
  }

  private kick(): void {
    if (this.closed || this.kickTimer) return;
    this.kickTimer = setTimeout(() => {
      this.kickTimer = undefined;
      void this.scan();
    }, 20);
    this.kickTimer.unref();
  }

  /** One pass over the directory; a pass asked for while one runs runs once more after it. */
  scan(): Promise<void> {
    if (this.scanning) {
      this.again = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      do {
        this.again = false;
        await this.pass().catch((e) => this.o.log.warn({ err: (e as Error).message }, 'plugin registration scan failed'));
      } while (this.again && !this.closed);
    })().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private async pass(): Promise<void> {
    if (this.closed) return;
    let names: string[] = [];
    try {
      names = readdirSync(this.o.dir);
    } catch {
      // the directory is gone: every plugin is
    }
    const seen = new Set<string>();
    for (const name of names) {
      if (name.startsWith('.') || this.closed) continue;
      const path = join(this.o.dir, name);
      let key: string;
      try {
        const st = lstatSync(path);
        if (!st.isSocket()) continue;
        key = `${st.ino}:${st.mtimeMs}`;
      } catch {
        continue;
      }
      seen.add(path);
      let pl = this.plugins.get(path);
      if (pl && pl.key !== key) {
        await this.deregister(path, pl);
        pl = undefined;
      }
      if (!pl) {
        pl = { key, registered: false, failures: 0, retryAt: 0 };
        this.plugins.set(path, pl);
      }
      if (!pl.registered && Date.now() >= pl.retryAt) await this.register(path, pl);
    }
    for (const [path, pl] of [...this.plugins]) if (!seen.has(path) && !this.closed) await this.deregister(path, pl);
  }

  private async register(path: string, pl: Plugin): Promise<void> {
    const timeout = this.o.rpcTimeoutMs ?? 10_000;
    const conn = (this.o.connect ?? ((p: string) => new RegistrationClient(p)))(path);
    const notify = (ok: boolean, error: string) =>
      withTimeout(conn.notifyRegistrationStatus({ plugin_registered: ok, error }), timeout, 'NotifyRegistrationStatus').catch((e) =>
        this.o.log.warn({ socket: path, err: (e as Error).message }, `RegisterPlugin error -- failed to send registration status at socket ${path}`),
      );
    try {
      let info: PluginInfo;
      try {
        info = await withTimeout(conn.getInfo(), timeout, 'GetInfo');
      } catch (e) {
        throw new Error(`RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${path}, err: ${(e as Error).message}`);
      }
      const handler = this.o.handlers[info.type];
      if (!handler) {
        const msg = `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${path}`;
        await notify(false, msg);
        throw new Error(msg);
      }
      const endpoint = info.endpoint || path;
      const versions = info.supported_versions ?? [];
      try {
        handler.validate(info.name, endpoint, versions);
      } catch (e) {
        await notify(false, `RegisterPlugin error -- plugin validation failed with err: ${(e as Error).message}`);
        throw new Error('RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed');
      }
      // Known before registering, so a socket removed meanwhile is deregistered.
      pl.name = info.name;
      pl.type = info.type;
      try {
        await handler.register(info.name, endpoint, versions);
      } catch (e) {
        const msg = `RegisterPlugin error -- plugin registration failed with err: ${(e as Error).message}`;
        await notify(false, msg);
        throw new Error(msg);
      }
      pl.registered = true;
      pl.failures = 0;
      await notify(true, '');
      this.o.log.info({ socket: path, plugin: info.name, type: info.type }, 'plugin registered');
    } catch (e) {
      pl.failures++;
      pl.retryAt = Date.now() + Math.min(500 * 2 ** pl.failures, MAX_RETRY_MS);
      this.o.log.warn({ socket: path, err: (e as Error).message }, 'plugin registration failed');
    } finally {
      conn.close();
    }
  }

  private async deregister(path: string, pl: Plugin): Promise<void> {
    this.plugins.delete(path);
    if (!pl.name || !pl.type) return;
    const handler = this.o.handlers[pl.type];
    try {
      await handler?.deregister(pl.name);
    } catch (e) {
      this.o.log.error({ socket: path, plugin: pl.name, err: (e as Error).message }, 'plugin deregistration failed');
    }
  }
}
