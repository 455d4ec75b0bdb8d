/**
 * The browser call page (`GET /browser?call=<call_id>&token=<token>`), served by the media
 * node that runs the call, so that its WebSocket goes back to the same host. Vanilla JS, no
 * dependencies, no build step: kept as a string so that it ships inside the compiled service.
 *
 * Microphone -> AudioWorklet (ScriptProcessor where worklets are missing) -> 8 kHz by
 * averaging -> mu-law -> 20 ms `media` frames. `playAudio` frames are decoded and scheduled
 * back to back on an AudioContext; `clearAudio` stops what is queued at once; `mark` is
 * answered `played` when playback reaches it. Transcript lines are listed as
 * `#transcript li.assistant` / `li.user` (`.interrupted` when cut by barge-in).
 *
 * `?autostart=1` starts without the button (kiosks, tests). `window.voiceCall` exposes the
 * call for tests and embedding: `{state, callId, transcript: [{role, text, interrupted}],
 * playedSamples, receivedSamples, sentFrames, endedReason, error, start(), hangUp()}`;
 * `state` is idle, connecting, live, ended or failed.
 *
 * Browsers give the microphone to secure pages only: serve the media node over https
 * (wss) outside localhost.
 */
export const BROWSER_CALL_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Talk to the agent</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  button { font-size: 1rem; padding: 0.5rem 1.25rem; margin-right: 0.5rem; }
  #status { margin: 1rem 0; color: #555; }
  #transcript { list-style: none; padding: 0; }
  #transcript li { margin: 0.4rem 0; padding: 0.4rem 0.6rem; border-radius: 0.4rem; }
  #transcript li.assistant { background: #eef3ff; }
  #transcript li.user { background: #eefbea; text-align: right; }
  #transcript li.interrupted::after { content: " \\2026"; color: #888; }
</style>
</head>
<body>
<h1>Talk to the agent</h1>
<p><button id="start" type="button">Start</button><button id="hangup" type="button" disabled>Hang up</button></p>
<p id="status">Press Start and allow the microphone.</p>
<ul id="transcript"></ul>
<script>
(function () {
  'use strict';
  var RATE = 8000;
  var FRAME_SAMPLES = 160; // 20 ms at 8 kHz
  var params = new URLSearchParams(location.search);
  var callId = params.get('call') || '';
  var token = params.get('token') || '';
  var startButton = document.getElementById('start');
  var hangupButton = document.getElementById('hangup');
  var statusLine = document.getElementById('status');
  var list = document.getElementById('transcript');

  var call = {
    state: 'idle',
    callId: callId,
    transcript: [],
    playedSamples: 0,
    receivedSamples: 0,
    sentFrames: 0,
    endedReason: null,
    error: null,
    start: start,
    hangUp: hangUp
  };
  window.voiceCall = call;

  var ctx = null;
  var socket = null;
  var mic = null;
  var nodes = [];
  var sources = [];
  var marks = [];
  var playhead = 0;
  var markTimer = null;

  // ---- mu-law (G.711), as the media node's own codec ----
  function linearToMulaw(sample) {
    var s = Math.max(-32768, Math.min(32767, Math.round(sample)));
    var sign = s < 0 ? 0x80 : 0;
    if (s < 0) s = -s;
    if (s > 32635) s = 32635;
    s += 0x84;
    var exponent = 7;
    for (var mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
    var mantissa = (s >> (exponent + 3)) & 0x0f;
    return ~(sign | (exponent << 4) | mantissa) & 0xff;
  }
  var MULAW_TO_FLOAT = new Float32Array(256);
  for (var b = 0; b < 256; b++) {
    var u = ~b & 0xff;
    var magnitude = ((((u & 0x0f) << 3) + 0x84) << ((u >> 4) & 0x07)) - 0x84;
    MULAW_TO_FLOAT[b] = (u & 0x80 ? -magnitude : magnitude) / 32768;
  }

  function toBase64(bytes) {
    var text = '';
    for (var i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
    return btoa(text);
  }
  function fromBase64(text) {
    var raw = atob(text);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  // ---- the person's side: state, status, transcript ----
  function setState(state, message) {
    call.state = state;
    document.body.setAttribute('data-state', state);
    if (message) statusLine.textContent = message;
    startButton.disabled = state !== 'idle';
    hangupButton.disabled = state !== 'connecting' && state !== 'live';
  }

  function showLine(role, text, interrupted) {
    var last = call.transcript[call.transcript.length - 1];
    // Barge-in cuts the reply to what was heard: it replaces the full line sent before it.
    if (interrupted && role === 'assistant' && last && last.role === 'assistant' && !last.interrupted && last.text.indexOf(text) === 0) {
      last.text = text;
      last.interrupted = true;
      last.element.textContent = text;
      last.element.className = 'assistant interrupted';
      return;
    }
    var li = document.createElement('li');
    li.className = role + (interrupted ? ' interrupted' : '');
    li.textContent = text;
    list.appendChild(li);
    var line = { role: role, text: text, interrupted: interrupted };
    Object.defineProperty(line, 'element', { value: li, enumerable: false });
    call.transcript.push(line);
  }

  // ---- the agent's audio ----
  function play(bytes) {
    call.receivedSamples += bytes.length;
    var buffer = ctx.createBuffer(1, bytes.length, RATE);
    var data = buffer.getChannelData(0);
    for (var i = 0; i < bytes.length; i++) data[i] = MULAW_TO_FLOAT[bytes[i]];
    var source = ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(ctx.destination);
    // Back to back; a small lead when the queue has run dry, so the start is not clipped.
    var at = Math.max(ctx.currentTime + 0.02, playhead);
    source.start(at);
    playhead = at + buffer.duration;
    var entry = { source: source, cleared: false };
    sources.push(entry);
    source.onended = function () {
      sources = sources.filter(function (s) { return s !== entry; });
      if (!entry.cleared) call.playedSamples += bytes.length;
    };
  }

  function clearAudio() {
    sources.forEach(function (s) {
      s.cleared = true;
      try { s.source.stop(); } catch (e) { /* not started yet */ }
    });
    sources = [];
    marks = [];
    playhead = 0;
  }

  function checkMarks() {
    if (!ctx) return;
    while (marks.length && ctx.currentTime >= marks[0].at) send({ event: 'played', name: marks.shift().name });
  }

  // ---- the microphone ----
  function micAudio(ctxRate) {
    // Averages each group of input samples that make one 8 kHz sample (integer steps, no drift).
    var sum = 0;
    var count = 0;
    var step = 0;
    var frame = new Uint8Array(FRAME_SAMPLES);
    var filled = 0;
    return function (samples) {
      for (var i = 0; i < samples.length; i++) {
        sum += samples[i];
        count++;
        step += RATE;
        if (step < ctxRate) continue;
        step -= ctxRate;
        frame[filled++] = linearToMulaw((sum / count) * 32767);
        sum = 0;
        count = 0;
        if (filled === FRAME_SAMPLES) {
          filled = 0;
          if (socket && socket.readyState === WebSocket.OPEN && call.state === 'live') {
            send({ event: 'media', payload: toBase64(frame) });
            call.sentFrames++;
          }
        }
      }
    };
  }

  var WORKLET = 'class MicTap extends AudioWorkletProcessor {' +
    ' process(inputs) { var channel = inputs[0] && inputs[0][0]; if (channel) this.port.postMessage(channel.slice(0)); return true; }' +
    '} registerProcessor("mic-tap", MicTap);';

  async function openMicrophone() {
    mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    if (call.state !== 'connecting' && call.state !== 'live') return stopMicrophone();
    var source = ctx.createMediaStreamSource(mic);
    var push = micAudio(ctx.sampleRate);
    // Muted sink: the tap must be pulled by the graph, but the person must not hear themselves.
    var sink = ctx.createGain();
    sink.gain.value = 0;
    sink.connect(ctx.destination);
    var tap;
    if (ctx.audioWorklet && typeof AudioWorkletNode === 'function') {
      var url = URL.createObjectURL(new Blob([WORKLET], { type: 'application/javascript' }));
      await ctx.audioWorklet.addModule(url);
      URL.revokeObjectURL(url);
      tap = new AudioWorkletNode(ctx, 'mic-tap', { numberOfInputs: 1, numberOfOutputs: 1, channelCount: 1, channelCountMode: 'explicit' });
      tap.port.onmessage = function (event) { push(event.data); };
    } else {
      tap = ctx.createScriptProcessor(2048, 1, 1);
      tap.onaudioprocess = function (event) { push(event.inputBuffer.getChannelData(0)); };
    }
    source.connect(tap);
    tap.connect(sink);
    nodes = [source, tap, sink];
  }

  function stopMicrophone() {
    nodes.forEach(function (node) { try { node.disconnect(); } catch (e) { /* already */ } });
    nodes = [];
    if (mic) mic.getTracks().forEach(function (track) { track.stop(); });
    mic = null;
  }

  // ---- the call ----
  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  function receive(event) {
    var frame;
    try { frame = JSON.parse(event.data); } catch (e) { return; }
    if (frame.event === 'playAudio' && typeof frame.payload === 'string') play(fromBase64(frame.payload));
    else if (frame.event === 'clearAudio') clearAudio();
    else if (frame.event === 'mark' && typeof frame.name === 'string') marks.push({ name: frame.name, at: playhead });
    else if (frame.event === 'transcript' && typeof frame.text === 'string') showLine(frame.role === 'user' ? 'user' : 'assistant', frame.text, frame.interrupted === true);
    else if (frame.event === 'ended') finish('ended', typeof frame.reason === 'string' ? frame.reason : 'the call is over');
  }

  function finish(state, reason) {
    if (call.state === 'ended' || call.state === 'failed') return;
    call.endedReason = reason;
    if (state === 'failed') call.error = reason;
    setState(state, state === 'failed' ? 'The call failed: ' + reason : 'The call has ended (' + reason + ').');
    stopMicrophone();
    if (markTimer) clearInterval(markTimer);
    if (socket && socket.readyState === WebSocket.OPEN) socket.close(1000);
    // The last words play out before the audio stops.
    var context = ctx;
    if (context) setTimeout(function () { context.close(); }, Math.max(0, (playhead - context.currentTime) * 1000) + 200);
  }

  async function start() {
    if (call.state !== 'idle') return;
    if (!callId || !token) {
      setState('idle', 'This page needs the link from POST /calls/browser (call and token).');
      call.error = 'no call or token in the page address';
      return;
    }
    setState('connecting', 'Connecting...');
    try {
      ctx = new AudioContext();
      // Not awaited: without a click (autostart) the promise waits for one.
      if (ctx.state === 'suspended') ctx.resume();
      var scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
      socket = new WebSocket(scheme + location.host + '/browser/calls/' + encodeURIComponent(callId) + '?token=' + encodeURIComponent(token));
      var opened = false;
      socket.onopen = function () {
        opened = true;
        if (call.state === 'connecting') setState('live', 'Connected: talk to the agent.');
      };
      socket.onmessage = receive;
      socket.onclose = function (event) {
        if (opened) finish('ended', 'the connection closed (' + event.code + ')');
        else finish('failed', 'could not connect; the link may have expired, ask for a new call');
      };
      markTimer = setInterval(checkMarks, 50);
      await openMicrophone();
    } catch (error) {
      send({ event: 'stop' });
      finish('failed', error && error.message ? error.message : String(error));
    }
  }

  function hangUp() {
    if (call.state !== 'connecting' && call.state !== 'live') return;
    send({ event: 'stop' });
    finish('ended', 'you hung up');
  }

  startButton.addEventListener('click', function () { start(); });
  hangupButton.addEventListener('click', hangUp);
  if (params.get('autostart') === '1') start();
})();
</script>
</body>
</html>
`;
