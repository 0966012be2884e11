package report

import (
	"html/template"
	"strings"
)

// pageCSS styles report.html. Colours: verdict green/red/amber; in the
// timeline and plots acquire teal, cs slate, release purple, fail orange,
// info magenta, crash red.
const pageCSS = `
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fff}
main,nav.top{max-width:1260px;margin:0 auto;padding:0 16px}
.banner{padding:16px 24px;color:#fff;display:flex;gap:28px;align-items:flex-start}
.banner.valid{background:#2e7d32}.banner.invalid{background:#c62828}.banner.unknown{background:#f9a825;color:#1d1d1f}
.banner .verdict{font-size:34px;font-weight:750;letter-spacing:.06em;line-height:1.1}
.banner h1{margin:0 0 2px;font-size:20px}
.banner p{margin:3px 0}
.banner code{background:rgba(0,0,0,.2);padding:2px 6px;border-radius:3px;overflow-wrap:anywhere;font-size:13px}
.banner .err{font-weight:600}
nav.top{padding-top:8px;padding-bottom:8px;border-bottom:1px solid #ddd;display:flex;gap:16px;flex-wrap:wrap}
nav.top a{color:#0b57d0;text-decoration:none}
h2{font-size:18px;margin:22px 0 8px}
h3{font-size:15px;margin:14px 0 6px}
.anomaly{margin:8px 0;padding:8px 12px;border-left:4px solid #c62828;background:#fdf3f3;white-space:pre-wrap}
.anomaly.fenced{border-left-color:#9e9e9e;background:#f5f5f5}
.anomaly .meta{color:#555;font-size:12.5px}
.tag{display:inline-block;font-size:12px;font-weight:650;padding:0 6px;border-radius:3px;background:#c62828;color:#fff}
.tag.fenced{background:#757575}
.tag.k-lost-update{background:#d84315}.tag.k-nonlinearizable{background:#6a1b9a}.tag.k-stale-write-rejected{background:#757575}.tag.k-other{background:#ad1457}
.more{color:#555;font-style:italic}
.controls{display:flex;gap:8px;align-items:center;margin:6px 0}
.controls button{font:inherit;padding:1px 10px;border:1px solid #bbb;background:#f7f7f7;border-radius:3px;cursor:pointer}
.hint,.note,.caption{color:#666;font-size:12.5px}
svg.tl,svg.plot{width:100%;height:auto;display:block;font-size:11px;user-select:none}
svg.tl{cursor:grab;border:1px solid #e3e3e3}
.lanes rect{fill:#f6f7fa}.lanes text{text-anchor:end;fill:#333}
.axis line{stroke:#e6e6e6;stroke-width:1}.axis text{text-anchor:middle;fill:#666}
.axis.y text{text-anchor:end}
#tl-plot *{vector-effect:non-scaling-stroke}
#tl-plot path{fill:none;stroke-width:3;stroke-linecap:square}
#tl-plot path.a{stroke:#2a9d8f;stroke-width:2}#tl-plot path.c{stroke:#264653}#tl-plot path.r{stroke:#7b5ea7}#tl-plot path.o{stroke:#607d8b}
#tl-plot path.f{stroke:#f4a261}#tl-plot path.i{stroke:#c2185b}#tl-plot path.k{stroke:#d00000;stroke-width:2;stroke-linecap:butt}#tl-plot path.e{stroke:#0096c7;stroke-width:2;stroke-linecap:butt;stroke-dasharray:3 2}
.h{fill:#b9dcef;stroke:#6fa8c9;stroke-width:1}.h.x{fill:#ef9a9a;stroke:#c62828}
#tl-plot path.hp{stroke:#b9dcef;stroke-width:10;stroke-linecap:butt}#tl-plot path.hp.x{stroke:#ef9a9a}
.dh,#tl-plot path.dh{fill:rgba(198,40,40,.16);stroke:rgba(198,40,40,.5);stroke-width:1}
.sb1,#tl-plot path.sb1{fill:#e4e4e4;stroke:none}.sb2,#tl-plot path.sb2{fill:#cfcfcf;stroke:none}.sb3,#tl-plot path.sb3{fill:#b5b5b5;stroke:none}.dw rect{fill:#455a64}
.fb{fill:rgba(255,179,0,.14)}.fb-network{fill:rgba(30,136,229,.12)}.fb-node{fill:rgba(97,97,97,.14)}.fb-clock{fill:rgba(142,36,170,.12)}.fb-other{fill:rgba(121,85,72,.12)}
.fl{fill:#ffb300;stroke:#ffb300;stroke-width:1}.fl.fb-network{fill:#1e88e5;stroke:#1e88e5}.fl.fb-node{fill:#616161;stroke:#616161}.fl.fb-clock{fill:#8e24aa;stroke:#8e24aa}.fl.fb-other{fill:#795548;stroke:#795548}
.al{fill:#c62828;stroke:#c62828;stroke-width:2}.al-lost-update{fill:#d84315;stroke:#d84315}.al-nonlinearizable{fill:#6a1b9a;stroke:#6a1b9a}
.al-stale-write-rejected{fill:#9e9e9e;stroke:#9e9e9e}.al-other{fill:#ad1457;stroke:#ad1457}
.plot .bg{fill:#fbfbfc;stroke:#ddd}
.pt{fill:none;stroke-linecap:round}.pt.ok{stroke-width:3.5}.pt.fail{stroke-width:1.6}.pt.info{stroke-width:1.3}
.ln{fill:none;stroke-width:1.6}.ln.bad{stroke-dasharray:4 3}
.s0{stroke:#2a9d8f;background:#2a9d8f}.s1{stroke:#264653;background:#264653}.s2{stroke:#7b5ea7;background:#7b5ea7}
.s3{stroke:#607d8b;background:#607d8b}.s4{stroke:#8d6e63;background:#8d6e63}.s5{stroke:#9e9d24;background:#9e9d24}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;font-size:12.5px;color:#333;margin:4px 0 10px}
.sw{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:middle;border-radius:2px}
.sw.hold{background:#b9dcef}.sw.holdx{background:#ef9a9a}.sw.a{background:#2a9d8f}.sw.c{background:#264653}.sw.r{background:#7b5ea7}
.sw.f{background:#f4a261}.sw.i{background:#c2185b}.sw.k{background:#d00000;width:3px}.sw.e{background:#0096c7;width:3px}.sw.dh{background:rgba(198,40,40,.3)}
.sw.fb-process{background:rgba(255,179,0,.45)}.sw.fb-network{background:rgba(30,136,229,.4)}.sw.fb-node{background:rgba(97,97,97,.4)}.sw.fb-clock{background:rgba(142,36,170,.4)}.sw.fb-other{background:rgba(121,85,72,.4)}
dl.counts{display:flex;flex-wrap:wrap;gap:6px 28px;margin:6px 0 12px}
dl.counts div{min-width:90px}dl.counts dt{color:#666;font-size:12px}dl.counts dd{margin:0;font-size:20px;font-weight:600}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child{text-align:left}
td.v-valid{color:#2e7d32;font-weight:600}td.v-invalid{color:#c62828;font-weight:600}td.v-unknown{color:#b26a00;font-weight:600}
td.l{text-align:left}
details code{white-space:pre-wrap;word-break:break-all;font-size:12px}
ul.files li{margin:3px 0}
footer{max-width:1260px;margin:24px auto;padding:8px 16px;color:#888;font-size:12px;border-top:1px solid #eee}
.banner{padding:10px 24px}.banner .count{font-size:17px}.banner .count b{font-size:20px}
#tl.noq .q{display:none}
.toks text{font-size:9.5px;fill:#0d2b45;pointer-events:none}
#tl-plot path.hp.nd{stroke:#7986cb;stroke-width:8}#tl-plot path.nr{stroke:#1a237e;stroke-width:2;stroke-linecap:butt}
#tl-plot rect.lw{fill:rgba(198,40,40,.22);stroke:#c62828;stroke-dasharray:3 2}#tl-plot rect.srv{fill:#43a047}
.sw.lw{background:rgba(198,40,40,.35);border:1px dashed #c62828}.sw.srv{background:#81c784}.sw.bel{background:#90caf9}.sw.stale{background:#d00000}
.sw.exp{background:#b71c1c;width:3px}
#incident h2{margin:12px 0 4px}
#incident .sentence{margin:4px 0 6px;font-size:15px}
#incident .links{font-size:12.5px;color:#555;margin:2px 0 6px}
svg.incident{width:100%;height:auto;display:block;font-size:11px;border:1px solid #e3e3e3}
.in-bg{fill:#fff}.in-lane.odd .in-bg{fill:#f6f7fa}
.in-name{text-anchor:end;fill:#222;font-weight:600}.in-row{text-anchor:end;fill:#777;font-size:9.5px}
.in-srv{fill:#81c784}.in-hold{fill:#90caf9;stroke:#5b9bd5;stroke-width:.5}.in-hold.main{fill:#64b5f6}
.in-win{fill:rgba(198,40,40,.18);stroke:#c62828;stroke-width:1;stroke-dasharray:3 2}
.in-cs{fill:#264653}.in-cs.stale{fill:#d00000}.in-stale{fill:#c62828;font-weight:700}.in-cs.failed{fill:#f4a261}.in-failed{fill:#a0522d}
.in-exp{stroke:#b71c1c;stroke-width:2}.in-exp.inferred{stroke-dasharray:4 3}.in-explabel{fill:#b71c1c;font-weight:600}
.in-fault{stroke-width:1}.in-flabel{fill:#5d4037}
.in-tok{fill:#0d2b45;font-size:10px}.in-tok.out{fill:#0d47a1}.in-wlabel{text-anchor:middle;fill:#b71c1c;font-size:10px}
.in-ngrant{fill:#9fa8da}.in-ngrant.main{fill:#5c6bc0}.in-nrel{stroke:#1a237e;stroke-width:2}
ol.incidents{margin:4px 0 8px;padding-left:22px;font-size:13px}
dl.glossary dt{font-weight:650;margin-top:6px}dl.glossary dd{margin:0 0 0 18px}
`

// pageJS zooms and pans the timeline by changing the viewBox of its plot
// area, redraws the time axis, and zooms to an anomaly from its paragraph.
// It creates SVG elements in the namespace of the existing SVG, so the page
// names no URL.
const pageJS = `
(function(){
var tl=document.getElementById('tl');if(!tl)return;
var plot=document.getElementById('tl-plot'),axis=document.getElementById('tl-axis'),range=document.getElementById('tl-range');
var T=+tl.dataset.end,LX=+tl.dataset.lx,PW=+tl.dataset.pw,AH=+tl.dataset.ah,PH=+tl.dataset.ph,NS=tl.namespaceURI;
var v0=0,v1=T;
function nice(s){var r=s/12,m=Math.pow(10,Math.floor(Math.log10(r))),ks=[1,2,5,10];for(var i=0;i<ks.length;i++){if(ks[i]*m>=r)return ks[i]*m;}return 10*m;}
function lab(t,st){var d=st<1?Math.ceil(-Math.log10(st)-1e-9):0;return t.toFixed(d)+' s';}
function el(n,a){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);return e;}
function draw(){
plot.setAttribute('viewBox',v0+' 0 '+(v1-v0)+' '+PH);
while(axis.firstChild)axis.removeChild(axis.firstChild);
var a=v0/1000,b=v1/1000,st=nice(b-a);
for(var t=Math.ceil(a/st-1e-9)*st;t<=b+1e-9;t+=st){
var x=LX+(t-a)/(b-a)*PW;
axis.appendChild(el('line',{x1:x,x2:x,y1:AH-4,y2:AH+PH}));
var tx=el('text',{x:x,y:14});tx.textContent=lab(t,st);axis.appendChild(tx);}
if(range)range.textContent=(v0<=0&&v1>=T)?'whole run':'showing '+lab(a,st/10)+' to '+lab(b,st/10);
toks();}
var tokg=document.getElementById('tl-tok'),holds=null;
function toks(){if(!tokg)return;while(tokg.firstChild)tokg.removeChild(tokg.firstChild);
if(!holds){holds=[];plot.querySelectorAll('rect.h').forEach(function(r){var t=r.querySelector('title'),m=t&&/\((?:token|zxid) ([^)]+)\)/.exec(t.textContent);
if(m)holds.push({x:+r.getAttribute('x'),w:+r.getAttribute('width'),y:+r.getAttribute('y'),l:m[1]});});}
var k=PW/(v1-v0),n=0;
for(var i=0;i<holds.length&&n<400;i++){var h=holds[i];if(h.x+h.w<v0||h.x>v1)continue;
var x0=Math.max(h.x,v0),x1=Math.min(h.x+h.w,v1);if((x1-x0)*k<h.l.length*6+4)continue;
var tx=el('text',{x:LX+(x0-v0)*k+2,y:AH+h.y+8.5});tx.textContent=h.l;tokg.appendChild(tx);n++;}}
function zoom(a,b){var m=0.05;if(b-a<m){var c=(a+b)/2;a=c-m/2;b=c+m/2;}
if(b-a>=T){a=0;b=T;}if(a<0){b-=a;a=0;}if(b>T){a-=b-T;b=T;}v0=Math.max(0,a);v1=b;draw();}
function width(){return plot.getBoundingClientRect().width||1;}
function at(cx){var r=plot.getBoundingClientRect();return v0+(cx-r.left)/(r.width||1)*(v1-v0);}
tl.addEventListener('wheel',function(e){e.preventDefault();
if(Math.abs(e.deltaX)>Math.abs(e.deltaY)){var d=e.deltaX/width()*(v1-v0);zoom(v0+d,v1+d);return;}
var t=at(e.clientX),f=e.deltaY<0?0.8:1.25;zoom(t-(t-v0)*f,t+(v1-t)*f);},{passive:false});
var drag=null;
tl.addEventListener('mousedown',function(e){if(e.button===0){drag={x:e.clientX,a:v0,b:v1};}});
window.addEventListener('mousemove',function(e){if(!drag)return;var d=(drag.x-e.clientX)/width()*(drag.b-drag.a);if(d!==0)zoom(drag.a+d,drag.b+d);});
window.addEventListener('mouseup',function(){drag=null;});
tl.addEventListener('dblclick',function(){zoom(0,T);});
document.querySelectorAll('[data-zoom]').forEach(function(b){b.addEventListener('click',function(){
var k=b.dataset.zoom,c=(v0+v1)/2,h=(v1-v0)/2;
if(k==='in')zoom(c-h/2,c+h/2);else if(k==='out')zoom(c-h*2,c+h*2);else zoom(0,T);});});
var fl=document.getElementById('tl-flight');if(fl){fl.addEventListener('change',function(){tl.classList.toggle('noq',!fl.checked);});}
document.querySelectorAll('a[data-t0]').forEach(function(a){a.addEventListener('click',function(){
var t0=+a.dataset.t0,t1=+a.dataset.t1,p=Math.max((t1-t0)*0.25,50);zoom(t0-p,t1+p);});});
draw();
})();
`

// pageHTML is report.html.
const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Meta.Name}}: {{.Verdict}} (lockcheck)</title>
<style>{{css}}{{.FaultCSS}}</style>
</head>
<body>
<header class="banner {{.Verdict}}" id="verdict">
<div class="verdict">{{upper .Verdict}}</div>
<div class="what">
<h1>{{.Meta.Name}}</h1>
<p>lock <b>{{.Meta.Lock}}</b> · nemesis <b>{{.Meta.Nemesis}}</b> · seed <b>{{.Meta.Seed}}</b>{{if .Duration}} · {{.Duration}}{{end}} · {{.Fencing}}{{if .Meta.Workers}} · {{.Meta.Workers}} workers{{end}}{{if .Started}} · started {{.Started}}{{end}}</p>
{{if .Incident}}<p class="count"><b id="incident-count">{{.Incident.Count}} {{if eq .Incident.Count 1}}incident{{else}}incidents{{end}}</b> <span>({{.Summary}}; an incident is one overlap of holders and all it caused)</span></p>{{else}}<p class="count" id="summary">{{.Summary}}</p>{{end}}
{{if .Meta.NoTokens}}<p id="no-tokens">The lock {{.Meta.Lock}} hands out no fencing token, so the resource cannot refuse a stale holder's write: fencing is not an option for it.</p>{{end}}
{{if .NotExercised}}<p class="err" id="not-exercised">not exercised: {{.NotExercised}}</p>{{end}}
{{if .Reached}}<p id="reached" title="the danger conditions this run reached (docs/conditions.md)">{{.Reached}}</p>{{end}}
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{if .Meta.Command}}<p>re-run: <code id="command">{{.Meta.Command}}</code></p>{{end}}
</div>
</header>
<nav class="top">
{{if .Incident}}<a href="#incident">first incident</a>{{end}}<a href="#anomalies">anomalies</a><a href="#timeline">timeline</a><a href="#plots">latency and throughput</a><a href="#counts">counts</a><a href="#checkers">checkers</a><a href="#glossary">glossary</a>
<span class="note">files:</span>{{range .Links}}<a href="{{.Href}}">{{.Text}}</a>{{end}}
</nav>
<main>
{{with .Incident}}<section id="incident">
<h2>Incident 1 of {{.Count}}, {{.Span}}: {{.Facets}}</h2>
<p class="sentence" id="incident-sentence">{{.Sentence}}</p>
{{.SVG}}
<div class="legend"><span><i class="sw srv"></i>the server holds it for you</span><span><i class="sw bel"></i>you believe you hold it (token on the bar)</span><span><i class="sw lw"></i>lost-lock window: the server let go, the holder did not know</span><span><i class="sw exp"></i>server release (dashed: inferred)</span><span><i class="sw c"></i>access to the resource</span><span><i class="sw stale"></i>stale access</span><span><i class="sw f"></i>access that failed</span><span>faults are drawn on the lane of the process they struck</span></div>
<p class="links">Drawn to time scale, one lane per process that held the lock; every grant made while the first holder still held it is drawn. <a href="#{{.Anchor}}">the stories</a> · <a href="#timeline" data-t0="{{.T0}}" data-t1="{{.T1}}">show in timeline</a>{{if .Linearizability}} · <a href="linearizability.html" id="incident-lin">linearizability.html</a>: the operations that cannot be put in one order{{end}} · <a href="#glossary">glossary</a></p>
{{if gt .Count 1}}<ol class="incidents">{{range .Others}}<li><a href="#{{.Anchor}}">{{.Span}}</a>: processes {{.Procs}}; {{.Kinds}}{{if .Fenced}} (fenced){{end}}</li>{{end}}</ol>{{end}}
</section>{{end}}
<section id="anomalies">
<h2>Anomalies</h2>
{{if not .Groups}}<p>The checkers found no anomalies.</p>{{end}}
{{range .Groups}}<h3>{{.Kind}} ({{.Count}})</h3>
{{range .Items}}<p class="anomaly{{if .Fenced}} fenced{{end}}" id="{{.ID}}"><span class="tag k-{{kindClass .Kind}}">{{.Kind}}</span>{{if .Fenced}} <span class="tag fenced">fenced</span>{{end}} <span class="meta">{{if .Key}}lock {{.Key}} · {{end}}processes {{.Processes}} · spans {{.Start}} to {{.End}} · <a href="#timeline" data-t0="{{.T0}}" data-t1="{{.T1}}">show in timeline</a>{{if .Linearizability}} · <a href="linearizability.html">linearizability.html</a>{{end}}</span>
<span class="explanation">{{.Explanation}}</span></p>
{{end}}{{end}}
{{if .More}}<p class="more">… and {{.More}} more (not shown here; all of them are in <a href="results.json">results.json</a>).</p>{{end}}
</section>
<section id="timeline">
<h2>Timeline</h2>
{{if .HistoryNote}}<p class="note">{{.HistoryNote}}</p>{{else}}
<div class="controls"><button type="button" data-zoom="in">zoom in</button><button type="button" data-zoom="out">zoom out</button><button type="button" data-zoom="reset">whole run</button><label class="note"><input type="checkbox" id="tl-flight"{{if .ShowFlight}} checked{{end}}> acquires in flight</label><span id="tl-range" class="note"></span><span class="hint">wheel zooms, drag pans, double-click resets; hover a bar or a mark for details; zoomed in, the bars show their tokens</span></div>
{{.Timeline.SVG}}
<div class="legend"><span><i class="sw hold"></i>hold (acquire ok to release)</span><span><i class="sw holdx"></i>hold in a double holder</span><span><i class="sw dh"></i>double-holder window</span><span><i class="sw a"></i>acquire ok</span><span><i class="sw c"></i>cs ok</span><span><i class="sw r"></i>release ok</span><span><i class="sw f"></i>fail</span><span><i class="sw i"></i>info</span><span><i class="sw k"></i>crash</span><span><i class="sw e"></i>event the lock client reported</span><span><i class="sw srv"></i>the server holds it (observed)</span><span><i class="sw lw"></i>lost-lock window</span>{{range .FaultKinds}}<span><i class="sw fk-{{.Kind}}"></i>{{.Kind}}: {{.Words}}</span>{{end}}</div>
<p class="caption">{{.Timeline.Lanes}} Each op is a mark from its invocation to its completion, in its lane's row for acquire (top), cs (middle) or release (bottom). {{.Timeline.Note}}</p>
{{end}}
</section>
<section id="plots">
{{if not .HistoryNote}}
<h2>Latency</h2>
{{.Latency}}
<h2>Throughput</h2>
{{.Throughput}}
{{end}}
</section>
<section id="counts">
<h2>Counts</h2>
{{with .Stats}}{{if .Present}}
<dl class="counts">
<div><dt>grants</dt><dd>{{.Grants}}</dd></div>
<div><dt>releases</dt><dd>{{.Releases}}</dd></div>
<div><dt>releases that found the lock lost</dt><dd>{{.ReleasedLost}}</dd></div>
<div><dt>fails</dt><dd>{{.Fails}}</dd></div>
<div><dt>infos</dt><dd>{{.Infos}}</dd></div>
<div><dt>stale writes rejected</dt><dd>{{.StaleWritesRejected}}</dd></div>
<div><dt>ops</dt><dd>{{.Ops}}</dd></div>
<div><dt>processes</dt><dd>{{.Processes}}</dd></div>
<div><dt>keys</dt><dd>{{.Keys}}</dd></div>
<div><dt>faults</dt><dd>{{.Faults}}</dd></div>
<div><dt>history length</dt><dd>{{printf "%.1f" .DurationS}} s</dd></div>
</dl>
<table>
<tr><th>op</th><th>ok</th><th>fail</th><th>info</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th></tr>
{{range .Rows}}<tr><td>{{.F}}</td><td>{{.OK}}</td><td>{{.Fail}}</td><td>{{.Info}}</td><td>{{.P50}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.Max}}</td></tr>
{{end}}</table>
<p class="note">Latency quantiles are over ok completions.</p>
{{else}}<p class="note">No stats result.</p>{{end}}{{end}}
</section>
<section id="checkers">
<h2>Checkers</h2>
<table>
<tr><th>checker</th><th class="l">verdict</th><th class="l">notes</th></tr>
{{range .Checkers}}<tr><td>{{.Name}}</td><td class="l v-{{.Verdict}}">{{.Verdict}}</td><td class="l">{{if .Advisory}}advisory (fenced run: the resource decides) {{end}}{{if .NotUsed}}{{.NotUsed}} {{end}}{{.Error}}{{if .Stats}}<details><summary>stats</summary><code>{{.Stats}}</code></details>{{end}}</td></tr>
{{end}}</table>
</section>
<section id="glossary">
<h2>Glossary</h2>
<dl class="glossary">
<dt>process</dt><dd>One client of the lock (a worker); a worker slot's process that was retired is replaced by process + workers.</dd>
<dt>grant, hold</dt><dd>A grant is an acquire that succeeded; the hold lasts from it until the holder starts its release, crashes, or the run ends: the time the holder believes it holds the lock.</dd>
<dt>token</dt><dd>A number the lock service hands out with each grant, larger for each later grant (a fencing token). A resource that checks it can refuse a holder whose token is older than one it has seen. Some services write them in a form of their own: a zxid as epoch:counter.</dd>
<dt>fencing</dt><dd>The resource refuses accesses with an older token than it has seen. "fencing: not used" means the resource took no tokens in this run.</dd>
<dt>lease, session</dt><dd>How long the server keeps a lock for a holder it does not hear from (a key's expiry, a lease, a session).</dd>
<dt>server release, expiry</dt><dd>The moment the lock service itself let the holder's lock go (a key expired, a session or lease ended), as an observer on its own connection saw it; "inferred" when none was observed and it is worked out from the lease.</dd>
<dt>lost-lock window</dt><dd>The time from the server's release to when the holder learned it had lost the lock (or let it go): in it the holder believes it holds a lock that the server no longer keeps for it.</dd>
<dt>incident</dt><dd>One overlap of holders and everything it caused, counted once.</dd>
<dt>double holder</dt><dd>Two processes held the lock at the same time.</dd>
<dt>access, stale access</dt><dd>A critical section: a read and a write of the protected resource. A stale access is one made after the server gave the lock to someone else.</dd>
<dt>lost update</dt><dd>A write that a later write overwrote without having read it: the resource lost it.</dd>
<dt>not linearizable (nonlinearizable)</dt><dd>The lock's operations cannot be put in one order that a correct lock would permit: whenever each one took effect, between when it was sent and when its answer came, two processes held the lock at once (or the register read a value it could not have held).</dd>
<dt>in flight</dt><dd>An operation invoked and not yet answered: an acquire that waits for the lock is in flight until it is granted or fails.</dd>
<dt>ok, fail, info</dt><dd>How an operation ended: it happened, it certainly did not, or it is in doubt (a timeout: it may have happened).</dd>
<dt>pause, partition, kill, clock jump</dt><dd>Faults: a process stopped (SIGSTOP) and resumed, links cut and healed, a server killed and restarted, a clock moved.</dd>
<dt>valid, invalid, unknown</dt><dd>The verdict: the lock kept its promise; it broke it; the checkers could not decide.</dd>
</dl>
</section>
<section id="files">
<h2>Files</h2>
<ul class="files">{{range .Links}}<li><a href="{{.Href}}">{{.Text}}</a> <span class="note">{{.Note}}</span></li>{{end}}</ul>
</section>
</main>
<footer>lockcheck report. This page is self-contained: it loads nothing from the network.</footer>
<script>{{js}}</script>
</body>
</html>
`

// pageTemplate renders page.
var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"upper":     strings.ToUpper,
	"kindClass": kindClass,
	"css":       func() template.CSS { return template.CSS(pageCSS) },
	"js":        func() template.JS { return template.JS(pageJS) },
}).Parse(pageHTML))
