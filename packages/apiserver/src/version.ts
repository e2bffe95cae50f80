/** What `/version` answers: a Kubernetes minor within one of the kubectl versions we support. */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-kubeling',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};
