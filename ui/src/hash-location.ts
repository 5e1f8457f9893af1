/** Hash routes, so the app works from any path (`/`, `/ui/`) without server-side rewrites. */
import { useEffect, useState } from 'preact/hooks';

/** A page of the app. */
export type Route =
  | { readonly page: 'list' }
  | { readonly page: 'rayservice'; readonly namespace: string; readonly name: string }
  | { readonly page: 'rolebasedgroup'; readonly namespace: string; readonly name: string };

/** The route of a location hash (`#/rayservices/ns/name`, `#/rolebasedgroups/ns/name`, else the list). */
function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts.length === 3 && parts[0] === 'rayservices') return { page: 'rayservice', namespace: parts[1], name: parts[2] };
  if (parts.length === 3 && parts[0] === 'rolebasedgroups') return { page: 'rolebasedgroup', namespace: parts[1], name: parts[2] };
  return { page: 'list' };
}

/** The link of a route. */
export function hrefOf(route: Route): string {
  if (route.page === 'list') return '#/';
  return `#/${route.page === 'rayservice' ? 'rayservices' : 'rolebasedgroups'}/${encodeURIComponent(route.namespace)}/${encodeURIComponent(route.name)}`;
}

/** The current route, following hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
