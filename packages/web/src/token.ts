/** The placeholder in `index.html` that the gateway replaces with the page's bearer token. */
export const TOKEN_PLACEHOLDER = '__SENDBOX_TOKEN__';
