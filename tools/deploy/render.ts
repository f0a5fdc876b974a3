/**
 * npm run deploy:render -- <overlay>   prints what `kubectl apply -k deploy/kubernetes/overlays/<overlay>`
 * would apply, as YAML (pipe it to `kubectl apply -f -` where no kustomize is at hand, or diff two releases).
 */
import { stringify } from 'yaml';
import { overlayDir, renderKustomization } from './kustomize';
import { overlayNames } from './overlays';

function main(): void {
  const name = process.argv[2];
  const names = overlayNames();
  if (!name || !names.includes(name)) {
    console.error(`usage: npm run deploy:render -- <overlay>   (one of: ${names.join(', ')})`);
    process.exit(2);
  }
  try {
    const objects = renderKustomization(overlayDir(name));
    process.stdout.write(objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n'));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}

main();
