/**
 * The one stylesheet of every server-rendered page (sign-in, consent, approval, status, errors),
 * served by src/http/pages.ts under a name carrying its hash. It lives here as text, not in a
 * .css file, so the bundle carries it without reading files at run time. Colours keep a
 * contrast of at least 4.5:1 against their background (WCAG 2.2, 1.4.3; the browser tests run
 * axe-core on every page).
 */
export const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2933;background:#f5f7fa}
a{color:#1f5fbf}a:hover{color:#174a96}
:focus-visible{outline:3px solid #1f5fbf;outline-offset:2px}
.brand{display:flex;align-items:center;gap:.6rem;max-width:28rem;margin:2rem auto 0;padding:0 1rem;font-weight:600;font-size:1.05rem}
.brand img{height:2rem;width:auto;max-width:10rem}
main{max-width:28rem;margin:1rem auto 3rem;background:#fff;border:1px solid #d9e2ec;border-radius:.5rem;padding:1.5rem 1.5rem 1.75rem}
body.wide .brand{max-width:54rem}
body.wide main{max-width:54rem;background:none;border:0;padding:0 1rem}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
label{display:block;font-weight:600;margin:1rem 0 .3rem}
input[type=email],input[type=password],input[type=text],input[type=url],input:not([type]),select{display:block;width:100%;padding:.6rem .7rem;font:inherit;color:inherit;background:#fff;border:1px solid #7b8794;border-radius:.375rem}
input:focus-visible,select:focus-visible{border-color:#1f5fbf}
.field-link{margin:.4rem 0 0;font-size:.9rem;text-align:right}
.actions{display:flex;flex-wrap:wrap;gap:.6rem;margin-top:1.5rem}
.actions .btn{flex:1 1 auto}
.btn{display:inline-block;min-height:2.75rem;padding:.6rem 1.1rem;font:inherit;font-weight:600;line-height:1.5;text-align:center;text-decoration:none;border-radius:.375rem;border:1px solid #1f5fbf;cursor:pointer}
.btn-primary{background:#1f5fbf;color:#fff}
.btn-primary:hover{background:#174a96;border-color:#174a96;color:#fff}
.btn-secondary{background:#fff;color:#1f5fbf}
.btn-secondary:hover{background:#eef4fc}
.btn-link{background:none;border:0;padding:0;min-height:0;font:inherit;color:#1f5fbf;text-decoration:underline;cursor:pointer}
.inline-form{display:inline}
.error,.notice{border-radius:.375rem;padding:.6rem .8rem;margin:0 0 1rem}
.error{background:#fdecec;color:#a61b1b;border:1px solid #f3b4b4}
.notice{background:#e6f4ea;color:#1d6b34;border:1px solid #a9d8b6}
.warning{background:#fff8e1;color:#7a5200;border:1px solid #f0d58a;border-radius:.375rem;padding:.6rem .8rem}
.muted{color:#52606d;font-size:.9rem}
.divider{display:flex;align-items:center;gap:.6rem;color:#52606d;font-size:.9rem;margin:1.25rem 0 0}
.divider::before,.divider::after{content:"";flex:1;border-top:1px solid #d9e2ec}
ul.scopes{padding-left:1.2rem}ul.scopes li{margin:.35rem 0}
dl.details{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:0 0 1rem}
dl.details dt{font-weight:600}dl.details dd{margin:0;overflow-wrap:anywhere}
pre.arguments{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f7fa;border:1px solid #d9e2ec;border-radius:.375rem;padding:.6rem}
.banner{border-radius:.5rem;padding:1rem;color:#fff;font-weight:700;font-size:1.2rem}
.banner.none{background:#237032}.banner.minor{background:#ffc53d;color:#1f2933}.banner.major{background:#c2410c}
.banner.critical{background:#b91c1c}.banner.maintenance{background:#1864ab}
.card{background:#fff;border:1px solid #d9e2ec;border-radius:.5rem;padding:.75rem 1rem;margin:.75rem 0}
.row{display:flex;justify-content:space-between;gap:.5rem;flex-wrap:wrap}.svc{font-weight:600}
.st{font-size:.9rem;font-weight:600}.st.none{color:#237032}.st.minor{color:#8a6100}.st.major{color:#c2410c}
.st.critical{color:#b91c1c}.st.maintenance{color:#1864ab}
ul.components{list-style:none;padding:0;margin:.5rem 0}
ul.components li{display:flex;justify-content:space-between;gap:.5rem;padding:.25rem 0;border-top:1px solid #f0f4f8;font-size:.95rem}
.bar{display:flex;gap:1px;height:28px;margin-top:.5rem}.bar span{flex:1;border-radius:1px;min-width:1px}
.bar .none{background:#2f9e44}.bar .minor{background:#f0b400}.bar .major{background:#e8590c}.bar .critical{background:#c92a2a}.bar .nodata{background:#d9e2ec}
.legend{display:flex;justify-content:space-between;font-size:.8rem;color:#52606d}
footer{margin:2rem 0 1rem;font-size:.85rem;color:#52606d}
.account-section{border-top:1px solid #d9e2ec;margin-top:1.5rem}
.account-section h2{margin-top:1rem}
ul.account-list{list-style:none;padding:0;margin:.5rem 0}
ul.account-list li{display:flex;justify-content:space-between;align-items:center;gap:.75rem;padding:.6rem 0;border-top:1px solid #f0f4f8}
ul.account-list li:first-child{border-top:0}
ul.account-list .item{min-width:0;overflow-wrap:anywhere}
.badge{display:inline-block;font-size:.8rem;font-weight:600;line-height:1.4;padding:0 .5rem;border-radius:1rem;background:#e6f4ea;color:#1d6b34;border:1px solid #a9d8b6}
details.account-form{margin:.5rem 0}
details.account-form summary{cursor:pointer;color:#1f5fbf;font-weight:600;padding:.2rem 0;min-height:24px}
.btn-small{min-height:2.25rem;padding:.3rem .8rem;white-space:nowrap}
.qr svg{display:block;width:12rem;height:12rem;margin:.5rem 0 1rem;border:1px solid #d9e2ec}
code.secret{font-size:1rem;overflow-wrap:anywhere;background:#f5f7fa;color:#1f2933;padding:.1rem .3rem;border-radius:.25rem}
ol.recovery-codes{columns:2;column-gap:2rem;padding-left:1.5rem;font-size:1.05rem}
ol.recovery-codes li{margin:.2rem 0}
.step-up{margin:1rem 0 0}
h3.svc,h3.title{font-size:1rem;margin:0}
ol.timeline{list-style:none;padding:0;margin:.5rem 0 0}
ol.timeline li{border-top:1px solid #f0f4f8;padding:.4rem 0}ol.timeline p{margin:0}
summary{cursor:pointer;color:#1f5fbf;min-height:1.5rem;padding:.15rem 0}
details.days{margin-top:.5rem;font-size:.9rem}
details.days table{width:100%;border-collapse:collapse;margin-top:.4rem}
details.days caption{text-align:left;color:#52606d;font-size:.85rem}
details.days th,details.days td{text-align:left;font-weight:400;padding:.25rem .4rem;border-top:1px solid #f0f4f8;vertical-align:top}
details.days thead th{font-weight:600}
section.day h2,section.day h3{font-size:1rem;margin:1rem 0 .25rem;padding-bottom:.2rem;border-bottom:1px solid #d9e2ec}
ul.incidents{list-style:none;padding:0;margin:0}ul.incidents li{padding:.3rem 0}
details.components,details.webhook{margin-top:1rem}
fieldset.choices{border:1px solid #d9e2ec;border-radius:.375rem;margin:.75rem 0;padding:.5rem .75rem}
fieldset.choices legend{font-weight:600;padding:0 .25rem}
.check{display:flex;align-items:center;gap:.5rem;min-height:2rem}
.check label{display:inline;margin:0;font-weight:400}
.check input{width:1.25rem;height:1.25rem;margin:0}
`;
