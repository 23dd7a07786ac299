// A remark plugin (issue 30): the docs link only to files of this repository, so that a clone is
// complete and no link goes stale elsewhere. remark-validate-links checks that relative links
// resolve, but `../shared/SPEC.md` resolves on a machine where that folder happens to exist; this
// refuses, in README.md and docs/, a link or image that leaves the repository: a relative path
// climbing above the folder remark runs in (the repository's root), an absolute path, or any URL
// with a scheme (https:, mailto:, file:…). Plain text (a name, an address in a code span) is fine.
import path from 'node:path';

const LINKING_NODES = new Set(['link', 'image', 'definition']);
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** Why the url leaves the repository, or undefined when it stays inside. */
function outsideReason(url, fileDir, root) {
  if (url.startsWith('#')) return undefined;
  if (SCHEME.test(url) || url.startsWith('//')) return 'a link to another site';
  const target = decodeURI(url.split('#')[0].split('?')[0]);
  if (target.startsWith('/') || path.isAbsolute(target)) return 'an absolute path';
  const relative = path.relative(root, path.resolve(fileDir, target));
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
    return 'a path outside the repository';
  return undefined;
}

function visit(node, found) {
  if (LINKING_NODES.has(node.type) && typeof node.url === 'string') found(node);
  for (const child of node.children ?? []) visit(child, found);
}

export default function remarkLinksStayInside() {
  return (tree, file) => {
    const root = path.resolve(file.cwd);
    const fileDir = path.dirname(path.resolve(file.cwd, file.path ?? '.'));
    visit(tree, (node) => {
      const reason = outsideReason(node.url, fileDir, root);
      if (reason)
        file.message(
          `Link to \`${node.url}\` leaves the repository (${reason})`,
          node,
          'remark-links-stay-inside:outside',
        );
    });
  };
}
