/** Whether the page is phone-narrow: the agent list becomes a drawer and the chrome compacts. */
import { useEffect, useState } from 'react';

/** Keep in step with the `max-width` media query in styles.css. */
export const NARROW_QUERY = '(max-width: 720px)';

export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW_QUERY).matches);
  useEffect(() => {
    const query = window.matchMedia(NARROW_QUERY);
    const onChange = () => setNarrow(query.matches);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, []);
  return narrow;
}
