/**
 * How the pages adapt to the person's device (docs/kernel.md, Pages), served after PAGE_CSS
 * in the same stylesheet:
 * - a dark palette under `prefers-color-scheme: dark` (with `<meta name="color-scheme">` in the
 *   layout, so form controls and scrollbars follow). Every colour pair keeps a contrast of at
 *   least 4.5:1 for text and 3:1 for borders of controls (WCAG 2.2, 1.4.3 and 1.4.11); the
 *   browser tests run axe-core on every page in both schemes;
 * - standalone text links at least 24px high (WCAG 2.2, 2.5.8 target size);
 * - on a phone, the card keeps a margin instead of running edge to edge.
 */
export const PAGE_CSS_ADAPT = `
.field-link a,.btn-link,footer a,.reference code{display:inline-block;min-height:1.5rem;line-height:1.5rem}
.reference{margin-top:1.5rem}
.next{margin-top:1.5rem}
@media (max-width:30rem){body:not(.wide) main{margin-left:1rem;margin-right:1rem;padding:1.25rem 1rem 1.5rem}}
@media (prefers-color-scheme:dark){
body{color:#e4e7eb;background:#11161d}
a,.btn-link{color:#8cb8ff}a:hover{color:#b3d0ff}
:focus-visible{outline-color:#8cb8ff}
main{background:#1b222c;border-color:#3b4757}
body.wide main{background:none}
input[type=email],input[type=password],input[type=text],input[type=url],input:not([type]),select{background:#11161d;border-color:#9aa5b1}
input:focus-visible,select:focus-visible{border-color:#8cb8ff}
.btn{border-color:#8cb8ff}
.btn-primary{background:#2f6fd0;border-color:#2f6fd0;color:#fff}
.btn-primary:hover{background:#1f5fbf;border-color:#1f5fbf;color:#fff}
.btn-secondary{background:transparent;color:#8cb8ff}
.btn-secondary:hover{background:#243044}
.error{background:#3d1717;color:#ffc1c1;border-color:#8a3030}
.notice{background:#12301d;color:#a6e9b9;border-color:#2f6f43}
.warning{background:#362a05;color:#ffd98a;border-color:#7a6214}
.muted,.divider,.legend,footer{color:#a9b4c0}
.divider::before,.divider::after{border-top-color:#3b4757}
pre.arguments{background:#11161d;border-color:#3b4757}
.card{background:#1b222c;border-color:#3b4757}
ul.components li{border-top-color:#2c3643}
.st.none{color:#6fdc8c}.st.minor{color:#f5c451}.st.major{color:#ff9a62}.st.critical{color:#ff8a8a}.st.maintenance{color:#8cc2f5}
.bar .nodata{background:#3b4757}
summary,details.account-form summary{color:#8cb8ff}
details.days caption{color:#a9b4c0}
.account-section,section.day h2,section.day h3,fieldset.choices,.qr svg{border-color:#3b4757}
ul.account-list li,ol.timeline li,details.days th,details.days td{border-top-color:#2c3643}
}
`;
