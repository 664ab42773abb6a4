// A stand-in agent API in Node: answers HTTP on AGENT_PORT (8080); SIGTERM keeps its
// default, so it dies of it, as most servers do.
const http = require("http");
const port = Number(process.env.AGENT_PORT || 8080);
http.createServer((req, res) => res.end("agent API\n"))
  .listen(port, () => console.log(`agent API on :${port} as uid ${process.getuid()}`));
