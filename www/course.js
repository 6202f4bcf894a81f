// The example course page's own script (external, as its Content-Security-Policy requires):
// fits the iframe to the height the widget reports, counts the cluster events it posts, and
// sends a command when the button is pressed. See docs/embedding.md for the message schema.

const frame = document.getElementById('frame');
const button = document.getElementById('kill');
const counter = document.getElementById('events');
let events = 0;

window.addEventListener('message', (event) => {
  if (event.source !== frame.contentWindow || event.data?.source !== 'kubeloop') return;
  const message = event.data;
  if (message.type === 'ready') button.disabled = false;
  if (message.type === 'resize') frame.style.height = `${message.height}px`;
  if (message.type === 'event') counter.textContent = `events: ${++events} (last: ${message.reason} ${message.involvedObject.kind.toLowerCase()}/${message.involvedObject.name})`;
});

button.addEventListener('click', () => {
  frame.contentWindow.postMessage({ type: 'command', command: 'kubectl scale deployment web --replicas=5' }, window.location.origin);
});
