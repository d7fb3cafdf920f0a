// htmlparser2's Tokenizer with faster scanning, emitting exactly the same callbacks.
//
// With entity decoding on, the stock Tokenizer visits every character through its state switch
// (text and attribute values stop at '&' as well as at '<' or the quote). Most characters change
// nothing: text up to the next '<' or '&', a quoted value up to its quote or '&', a tag or attribute
// name up to its end. This subclass replaces the loop (`parse`) and the one-character search
// (`fastForwardTo`) so those runs are skipped with String.prototype.indexOf (vectorised in V8) or a
// tight loop, and hands every character that does change state to the stock state method, which
// keeps the tokenizing rules (and entity decoding) htmlparser2's. Both overrides touch the
// Tokenizer's non-public fields, so they are tied to the pinned htmlparser2 version (12.0.0);
// test/parse/fast-tokenizer.test.ts checks the callback sequence against the stock Tokenizer.

import { Tokenizer, type TokenizerCallbacks } from "htmlparser2";

// htmlparser2 12.0.0 Tokenizer states (its `State` enum is not exported).
const S_TEXT = 1;
const S_IN_TAG_NAME = 3;
const S_IN_CLOSING_TAG_NAME = 6;
const S_BEFORE_ATTRIBUTE_NAME = 8;
const S_IN_ATTRIBUTE_NAME = 9;
const S_IN_ATTRIBUTE_VALUE_DQ = 12;
const S_IN_ATTRIBUTE_VALUE_SQ = 13;
const S_IN_ATTRIBUTE_VALUE_NQ = 14;
const S_IN_PLAIN_TEXT = 25;
const S_IN_ENTITY = 26;

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const SLASH = 0x2f;
const EQ = 0x3d;

/** The Tokenizer's fields and methods this file uses (all plain properties at run time). */
interface Internals {
  cbs: TokenizerCallbacks;
  state: number;
  buffer: string;
  sectionStart: number;
  index: number;
  running: boolean;
  offset: number;
  stateText(c: number): void;
  stateSpecialStartSequence(c: number): void;
  stateInSpecialTag(c: number): void;
  stateCDATASequence(c: number): void;
  stateDeclarationSequence(c: number): void;
  stateInAttributeValueDoubleQuotes(c: number): void;
  stateInAttributeName(c: number): void;
  stateInCommentLike(c: number): void;
  stateInSpecialComment(c: number): void;
  stateBeforeAttributeName(c: number): void;
  stateInTagName(c: number): void;
  stateInClosingTagName(c: number): void;
  stateBeforeTagName(c: number): void;
  stateAfterAttributeName(c: number): void;
  stateInAttributeValueSingleQuotes(c: number): void;
  stateBeforeAttributeValue(c: number): void;
  stateBeforeClosingTagName(c: number): void;
  stateAfterClosingTagName(c: number): void;
  stateInAttributeValueNoQuotes(c: number): void;
  stateInSelfClosingTag(c: number): void;
  stateInDeclaration(c: number): void;
  stateBeforeDeclaration(c: number): void;
  stateBeforeComment(c: number): void;
  stateInProcessingInstruction(c: number): void;
  stateInEntity(): void;
  cleanup(): void;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}

/** First index >= from in s[from, end) whose character ends a tag or attribute name, else end. */
function skipName(s: string, from: number, end: number, stopAtEq: boolean): number {
  let i = from;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c === SLASH || c === GT || (stopAtEq && c === EQ)) {
      if (c > 0x20 || isWhitespace(c)) return i;
    }
    i++;
  }
  return end;
}

const SINGLE_CHARS: string[] = [];
function charString(c: number): string {
  return (SINGLE_CHARS[c] ??= String.fromCharCode(c));
}

/**
 * The stock `fastForwardTo`: move `index` to the next occurrence of `c` after it and say whether
 * there was one (if not, to the last character of the buffer, as the caller's loop then steps past it).
 */
function fastForwardTo(this: Internals, c: number): boolean {
  const buffer = this.buffer;
  const found = buffer.indexOf(charString(c), this.index - this.offset + 1);
  if (found === -1) {
    this.index = buffer.length + this.offset - 1;
    return false;
  }
  this.index = found + this.offset;
  return true;
}

/** The stock `parse` loop, with runs of characters that change nothing skipped in one step. */
function parse(this: Internals): void {
  const buffer = this.buffer;
  const offset = this.offset;
  const length = buffer.length;
  const end = length + offset;
  // Position of the next '&' ('<', '"', "'") at or after the last search for it (length when there
  // is none): one indexOf serves every run up to it, so a page of entities is not rescanned for the
  // next '<' after each one.
  let nextAmp = -1;
  let nextLt = -1;
  let nextDq = -1;
  let nextSq = -1;
  while (this.index < end && this.running) {
    let at = this.index - offset;
    let c = buffer.charCodeAt(at);
    const state = this.state;
    // One call site on purpose: TurboFan merged two identical indexOf calls of the text and value
    // branches into one it then ran on every iteration (every character, quadratic on long pages).
    if (nextAmp < at && c !== AMP && (state === S_TEXT || state === S_IN_ATTRIBUTE_VALUE_DQ || state === S_IN_ATTRIBUTE_VALUE_SQ)) {
      nextAmp = buffer.indexOf("&", at);
      if (nextAmp === -1) nextAmp = length;
    }
    switch (state) {
      case S_TEXT: {
        if (c !== LT && c !== AMP) {
          if (nextLt < at) {
            nextLt = buffer.indexOf("<", at);
            if (nextLt === -1) nextLt = length;
          }
          const stop = nextLt < nextAmp ? nextLt : nextAmp;
          if (stop >= length) {
            this.index = end;
            continue;
          }
          at = stop;
          this.index = at + offset;
          c = buffer.charCodeAt(at);
        }
        this.stateText(c);
        break;
      }
      case S_IN_PLAIN_TEXT:
        // Skip to end of buffer; cleanup() emits the text.
        this.index = end - 1;
        break;
      case 23:
        this.stateSpecialStartSequence(c);
        break;
      case 24:
        this.stateInSpecialTag(c);
        break;
      case 19:
        this.stateCDATASequence(c);
        break;
      case 20:
        this.stateDeclarationSequence(c);
        break;
      case S_IN_ATTRIBUTE_VALUE_DQ:
      case S_IN_ATTRIBUTE_VALUE_SQ: {
        const dq = state === S_IN_ATTRIBUTE_VALUE_DQ;
        const quote = dq ? 0x22 : 0x27;
        if (c !== quote && c !== AMP) {
          let nextQuote: number;
          if (dq) {
            if (nextDq < at) {
              nextDq = buffer.indexOf('"', at);
              if (nextDq === -1) nextDq = length;
            }
            nextQuote = nextDq;
          } else {
            if (nextSq < at) {
              nextSq = buffer.indexOf("'", at);
              if (nextSq === -1) nextSq = length;
            }
            nextQuote = nextSq;
          }
          const stop = nextQuote < nextAmp ? nextQuote : nextAmp;
          if (stop >= length) {
            this.index = end;
            continue;
          }
          at = stop;
          this.index = at + offset;
          c = buffer.charCodeAt(at);
        }
        if (dq) this.stateInAttributeValueDoubleQuotes(c);
        else this.stateInAttributeValueSingleQuotes(c);
        break;
      }
      case S_IN_ATTRIBUTE_NAME:
      case S_IN_TAG_NAME:
      case S_IN_CLOSING_TAG_NAME: {
        const stop = skipName(buffer, at, length, state === S_IN_ATTRIBUTE_NAME);
        if (stop >= length) {
          this.index = end;
          continue;
        }
        if (stop !== at) {
          at = stop;
          this.index = at + offset;
          c = buffer.charCodeAt(at);
        }
        if (state === S_IN_ATTRIBUTE_NAME) this.stateInAttributeName(c);
        else if (state === S_IN_TAG_NAME) this.stateInTagName(c);
        else this.stateInClosingTagName(c);
        break;
      }
      case 22:
        this.stateInCommentLike(c);
        break;
      case 21:
        this.stateInSpecialComment(c);
        break;
      case S_BEFORE_ATTRIBUTE_NAME: {
        if (isWhitespace(c)) {
          while (++at < length && isWhitespace(buffer.charCodeAt(at)));
          if (at >= length) {
            this.index = end;
            continue;
          }
          this.index = at + offset;
          c = buffer.charCodeAt(at);
        }
        this.stateBeforeAttributeName(c);
        break;
      }
      case 2:
        this.stateBeforeTagName(c);
        break;
      case 10:
        this.stateAfterAttributeName(c);
        break;
      case 11:
        this.stateBeforeAttributeValue(c);
        break;
      case 5:
        this.stateBeforeClosingTagName(c);
        break;
      case 7:
        this.stateAfterClosingTagName(c);
        break;
      case S_IN_ATTRIBUTE_VALUE_NQ:
        this.stateInAttributeValueNoQuotes(c);
        break;
      case 4:
        this.stateInSelfClosingTag(c);
        break;
      case 16:
        this.stateInDeclaration(c);
        break;
      case 15:
        this.stateBeforeDeclaration(c);
        break;
      case 18:
        this.stateBeforeComment(c);
        break;
      case 17:
        this.stateInProcessingInstruction(c);
        break;
      case S_IN_ENTITY:
        this.stateInEntity();
        break;
    }
    this.index++;
  }
  this.cleanup();
}

/** htmlparser2's Tokenizer (HTML mode) with the faster loop; use it exactly like the stock one. */
export class FastTokenizer extends Tokenizer {}

/** Every callback with its arguments, as one string (for the self-check below). */
function callbackLog(Impl: typeof Tokenizer, html: string): string {
  const log: string[] = [];
  const cbs = {} as Record<string, (...args: unknown[]) => void>;
  for (const name of [
    "onattribdata", "onattribentity", "onattribend", "onattribname", "oncdata", "onclosetag", "oncomment", "ondeclaration",
    "onend", "onopentagend", "onopentagname", "onprocessinginstruction", "onselfclosingtag", "ontext", "ontextentity",
  ]) {
    cbs[name] = (...args: unknown[]) => log.push(`${name}(${args.join(",")})`);
  }
  const tokenizer = new Impl({ decodeEntities: true }, cbs as unknown as TokenizerCallbacks);
  tokenizer.write(html);
  tokenizer.end();
  return log.join(" ");
}

const SELF_CHECK =
  `<!DOCTYPE html><html lang=en><title>a &amp; b</title><script>x="</p>"<y</script><style>p{}</style>` +
  `<!-- c --><p class="x &lt; y" id='z' data-x=1&amp;2 hidden>t&eacute;xt &copy 2 <a href="/a?b=1&c=2">l</a></p>` +
  `</div ><br/><textarea>&lt;</textarea><![CDATA[x]]><?pi?>< a>`;

const proto = FastTokenizer.prototype as unknown as Record<string, unknown>;
const stock = Tokenizer.prototype as unknown as Record<string, unknown>;
// Patch only a Tokenizer shaped like the one this was written against, and keep the patch only if
// it tokenizes a sample exactly as the stock loop does: another htmlparser2 version falls back to
// the stock (slower) loop instead of mis-tokenizing.
if (typeof stock["parse"] === "function" && typeof stock["fastForwardTo"] === "function" && typeof stock["stateText"] === "function") {
  proto["parse"] = parse;
  proto["fastForwardTo"] = fastForwardTo;
  let same = false;
  try {
    same = callbackLog(FastTokenizer, SELF_CHECK) === callbackLog(Tokenizer, SELF_CHECK);
  } catch {
    // fall through to the stock loop
  }
  if (!same) {
    delete proto["parse"];
    delete proto["fastForwardTo"];
  }
}

/** Whether FastTokenizer runs the faster loop (false: the stock one; see the self-check above). */
export const fastTokenizerActive = Object.prototype.hasOwnProperty.call(proto, "parse");
