// Counts o200k_base tokens (the encoding of OpenAI's GPT-4o and later models) of each file named
// on the command line, printing one count per line. LANES_TOKENIZER_DIR names the directory whose
// node_modules holds gpt-tokenizer (scripts/lib/lanes.sh, lanes_ensure_tokenizer).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(join(process.env.LANES_TOKENIZER_DIR, 'node_modules', 'x.js'));
const { encode } = require('gpt-tokenizer/encoding/o200k_base');
for (const file of process.argv.slice(2)) {
  console.log(encode(readFileSync(file, 'utf8')).length);
}
