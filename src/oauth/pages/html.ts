import { escapeHtml } from '../../http/html.js';
/** Server-rendered pages: no JavaScript, every value escaped. */

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Gantry</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem}
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{padding:.55rem 1rem;font-size:1rem;margin:.8rem .4rem 0 0;cursor:pointer}
.error{color:#a01616}.notice{color:#1d5c2e}.muted{color:#5b6270;font-size:.9rem}
ul.scopes li{margin:.3rem 0}
</style>
</head>
<body><main>
${body}
</main></body>
</html>`;
}
