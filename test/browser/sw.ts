// The service worker of the browser suite: replays the Node-recorded tape for the OpenAI API.
import { replayInServiceWorker } from '../../dist/browser/index.js';

replayInServiceWorker({ tape: '/tapes/chat.tape', urls: ['https://api.openai.com/'] });
