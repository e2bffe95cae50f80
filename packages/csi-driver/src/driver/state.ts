/**
 * The hostpath driver's records: one per volume (name, ID, capacity, the
 * attachment, the staging and target paths), kept in `<stateDir>/volumes.json`
 * and written atomically (a temporary file renamed over the old one) after
 * every change, so a restarted driver knows its volumes and where they are
 * published. The volumes themselves are the folders `<stateDir>/volumes/<id>`.
 * Follows csi-driver-host-path pkg/state (state.json beside the data).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StagedRecord {
  /** The access mode the volume was staged with. */
  mode: string;
}

export interface PublishedRecord {
  readonly: boolean;
  mode: string;
  stagingPath: string;
}

export interface VolumeRecord {
  id: string;
  /** The CO's name from CreateVolume (the PV name for external-provisioner). */
  name: string;
  /** The size granted by CreateVolume and ControllerExpandVolume. */
  capacityBytes: number;
  /** The size the node has taken in by NodeExpandVolume. */
  nodeCapacityBytes: number;
  parameters: Record<string, string>;
  createdAt: string;
  /** Set by ControllerPublishVolume to this node, cleared by ControllerUnpublishVolume. */
  attached: { readonly: boolean } | null;
  staged: Record<string, StagedRecord>;
  published: Record<string, PublishedRecord>;
}

interface StateFile {
  version: 1;
  volumes: VolumeRecord[];
}

/** Volume IDs this driver makes are UUIDs; anything else in a record is refused at load. */
const VOLUME_ID = /^[0-9a-f-]{36}$/;

export class VolumeState {
  readonly volumesDir: string;
  private readonly file: string;
  private readonly byId = new Map<string, VolumeRecord>();

  constructor(readonly stateDir: string) {
    this.volumesDir = join(stateDir, 'volumes');
    this.file = join(stateDir, 'volumes.json');
    mkdirSync(this.volumesDir, { recursive: true });
    this.load();
  }

  private load(): void {
    if (!existsSync(this.file)) return;
    const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as StateFile;
    if (parsed.version !== 1 || !Array.isArray(parsed.volumes)) throw new Error(`${this.file}: unknown state format`);
    for (const v of parsed.volumes) {
      if (typeof v.id !== 'string' || !VOLUME_ID.test(v.id)) throw new Error(`${this.file}: bad volume id ${JSON.stringify(v.id)}`);
      this.byId.set(v.id, {
        ...v,
        nodeCapacityBytes: v.nodeCapacityBytes ?? v.capacityBytes,
        attached: v.attached ?? null,
        staged: v.staged ?? {},
        published: v.published ?? {},
      });
    }
  }

  /** Writes every record: to a temporary file first, then renamed over the state file. */
  save(): void {
    const body: StateFile = { version: 1, volumes: this.list() };
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  /** The folder of a volume: always `<stateDir>/volumes/<id>`. */
  volumePath(id: string): string {
    return join(this.volumesDir, id);
  }

  isVolumeId(id: string): boolean {
    return VOLUME_ID.test(id);
  }

  get(id: string): VolumeRecord | undefined {
    return this.byId.get(id);
  }

  byName(name: string): VolumeRecord | undefined {
    for (const v of this.byId.values()) if (v.name === name) return v;
    return undefined;
  }

  /** All records, sorted by ID (the order ListVolumes pages through). */
  list(): VolumeRecord[] {
    return [...this.byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The sum of the volumes' capacities. */
  usedBytes(): number {
    let sum = 0;
    for (const v of this.byId.values()) sum += v.capacityBytes;
    return sum;
  }

  attachedCount(): number {
    let n = 0;
    for (const v of this.byId.values()) if (v.attached) n++;
    return n;
  }

  put(v: VolumeRecord): void {
    this.byId.set(v.id, v);
    this.save();
  }

  delete(id: string): void {
    this.byId.delete(id);
    this.save();
  }
}
