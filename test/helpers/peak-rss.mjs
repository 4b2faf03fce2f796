// Preloaded into a child process (NODE_OPTIONS=--import <this file's URL>): writes the process's peak resident set,
// in kilobytes, to the file PEAK_RSS_FILE names when it exits, however it exits (an error's exit code included).
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const file = process.env.PEAK_RSS_FILE;
  if (file) writeFileSync(file, String(process.resourceUsage().maxRSS));
});
