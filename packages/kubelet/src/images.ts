/**
 * Making sure a container's image is there before it is created (kubernetes
 * pkg/kubelet/images/image_manager.go EnsureImageExists): an unparsable
 * reference is InvalidImageName; a present image is used unless the pull
 * policy is Always; Never with no image is ErrImageNeverPull; a failed pull is
 * ErrImagePull and backs off (10 s doubling, as crashes do), the container
 * waiting in ImagePullBackOff until the back-off ends. Each outcome records
 * the container's waiting reason and upstream's events.
 */
import { parseImageRef, type PodSandboxConfig } from '@kubeling/cri';
import type { Container, Pod } from './kinds.js';
import type { PodDeps } from './pod-state.js';
import { pullPolicy } from './podutil.js';

/** Whether the image is there to create the container with; when not, the pod's worker is triggered again as needed. */
export async function ensureImage(d: PodDeps, pod: Pod, c: Container, sbConfig: PodSandboxConfig): Promise<boolean> {
  const { o, state } = d;
  const uid = pod.metadata.uid!;
  const image = String(c.image ?? '');
  if (!parseImageRef(image)) {
    state.waiting.set(`${uid}/${c.name}`, {
      reason: 'InvalidImageName',
      message: `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`,
    });
    void o.recorder.event(
      pod,
      'Warning',
      'InspectFailed',
      `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`,
    );
    return false;
  }
  const policy = pullPolicy(c);
  const present = await o.runtime.imageStatus({ image });
  if (present && policy !== 'Always') {
    if (!state.backoffs.has(`${uid}/${c.name}/pulled`)) {
      state.backoffs.set(`${uid}/${c.name}/pulled`, { delay: 0, until: 0 });
      void o.recorder.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
    }
    return true;
  }
  if (policy === 'Never') {
    state.waiting.set(`${uid}/${c.name}`, { reason: 'ErrImageNeverPull', message: `Container image "${image}" is not present with pull policy of Never` });
    void o.recorder.event(pod, 'Warning', 'ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`);
    return false;
  }
  const pullKey = `${uid}/${c.name}/pull`;
  const b = state.backoffs.get(pullKey);
  if (b && b.until > Date.now()) {
    state.waiting.set(`${uid}/${c.name}`, { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` });
    void o.recorder.event(pod, 'Normal', 'BackOff', `Back-off pulling image "${image}"`);
    d.trigger(uid, b.until - Date.now() + 10);
    return false;
  }
  void o.recorder.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`);
  const t0 = Date.now();
  try {
    await o.runtime.pullImage({ image }, sbConfig);
  } catch (e) {
    const msg = (e as Error).message;
    state.bumpBackoff(uid, c.name, 'pull');
    state.waiting.set(`${uid}/${c.name}`, { reason: 'ErrImagePull', message: msg });
    void o.recorder.event(pod, 'Warning', 'Failed', `Failed to pull image "${image}": ${msg}`);
    void o.recorder.event(pod, 'Warning', 'Failed', 'Error: ErrImagePull');
    d.trigger(uid, (state.backoffs.get(pullKey)?.delay ?? 1000) + 10);
    return false;
  }
  state.backoffs.delete(pullKey);
  void o.recorder.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${Date.now() - t0}ms`);
  return true;
}
