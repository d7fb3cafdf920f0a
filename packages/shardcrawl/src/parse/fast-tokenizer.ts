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
const S_AFTER_ATTRIBUTE_NAME = 10;
const S_BEFORE_ATTRIBUTE_VALUE = 11;
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
const DQ = 0x22;
const SQ = 0x27;

// htmlparser2's QuoteType values (onattribend's first argument).
const QUOTE_NO_VALUE = 0;
const QUOTE_UNQUOTED = 1;
const QUOTE_SINGLE = 2;
const QUOTE_DOUBLE = 3;

/** The Tokenizer's fields and methods this file uses (all plain properties at run time). */
interface Internals {
  cbs: TokenizerCallbacks;
  state: number;
  buffer: string;
  sectionStart: number;
  index: number;
  running: boolean;
  offset: number;
  /** Next '&' in the buffer at or after the last search by scanAttributes (buffer length: none); -1 before the first. */
  attrAmp: number;
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

/** First index >= from in s[from, end) that is not whitespace, else end. */
function skipWhitespace(s: string, from: number, end: number): number {
  let i = from;
  while (i < end && isWhitespace(s.charCodeAt(i))) i++;
  return i;
}

/**
 * A tag's attributes from the first character of a name (at `at`, state BeforeAttributeName), in one
 * pass with the stock callbacks (onattribname, onattribdata, onattribend) at the stock positions.
 * Stops where the stock state machine has to go on: at the tag's '>' or '/' (state
 * BeforeAttributeName), at a '&' in a value (entity decoding stays stock), at the end of the
 * buffer, or when a callback paused the tokenizer. Leaves `state` and `sectionStart` as the stock
 * tokenizer has them at the returned position, whose character is not consumed yet.
 */
function scanAttributes(t: Internals, buffer: string, at: number, length: number): number {
  const cbs = t.cbs;
  const offset = t.offset;
  let i = at;
  for (;;) {
    // An attribute name starts at i; its first character is part of it whatever it is.
    const nameStart = i;
    i = skipName(buffer, i + 1, length, true);
    if (i >= length) {
      t.state = S_IN_ATTRIBUTE_NAME;
      t.sectionStart = nameStart + offset;
      return length;
    }
    cbs.onattribname(nameStart + offset, i + offset);
    const nameEnd = i;
    i = skipWhitespace(buffer, i, length);
    if (i >= length) {
      t.state = S_AFTER_ATTRIBUTE_NAME;
      t.sectionStart = nameEnd + offset;
      return length;
    }
    let c = buffer.charCodeAt(i);
    if (c !== EQ) {
      cbs.onattribend(QUOTE_NO_VALUE, nameEnd + offset);
      if (c === GT || c === SLASH) {
        t.state = S_BEFORE_ATTRIBUTE_NAME;
        t.sectionStart = -1;
        return i;
      }
      // Another name right after this one.
      if (!t.running) {
        t.state = S_IN_ATTRIBUTE_NAME;
        t.sectionStart = i + offset;
        return i + 1;
      }
      continue;
    }
    i = skipWhitespace(buffer, i + 1, length);
    if (i >= length) {
      t.state = S_BEFORE_ATTRIBUTE_VALUE;
      t.sectionStart = nameEnd + offset;
      return length;
    }
    c = buffer.charCodeAt(i);
    if (c === DQ || c === SQ) {
      const valueStart = i + 1;
      const close = buffer.indexOf(c === DQ ? '"' : "'", valueStart);
      const stop = close === -1 ? length : close;
      // One search serves every value up to the next '&' (a search per value would rescan the page).
      let amp = t.attrAmp;
      if (amp < valueStart) {
        amp = buffer.indexOf("&", valueStart);
        if (amp === -1) amp = length;
        t.attrAmp = amp;
      }
      if (amp < stop || close === -1) {
        t.state = c === DQ ? S_IN_ATTRIBUTE_VALUE_DQ : S_IN_ATTRIBUTE_VALUE_SQ;
        t.sectionStart = valueStart + offset;
        return amp < stop ? amp : length;
      }
      cbs.onattribdata(valueStart + offset, close + offset);
      cbs.onattribend(c === DQ ? QUOTE_DOUBLE : QUOTE_SINGLE, close + 1 + offset);
      i = close + 1;
    } else {
      // Unquoted: up to whitespace or '>' (the first character is taken even if it is '>').
      const valueStart = i;
      while (i < length) {
        const v = buffer.charCodeAt(i);
        if (v === GT || v === AMP || isWhitespace(v)) break;
        i++;
      }
      if (i >= length || buffer.charCodeAt(i) === AMP) {
        t.state = S_IN_ATTRIBUTE_VALUE_NQ;
        t.sectionStart = valueStart + offset;
        return i;
      }
      cbs.onattribdata(valueStart + offset, i + offset);
      cbs.onattribend(QUOTE_UNQUOTED, i + offset);
    }
    // BeforeAttributeName.
    i = skipWhitespace(buffer, i, length);
    if (i >= length || !t.running) {
      t.state = S_BEFORE_ATTRIBUTE_NAME;
      t.sectionStart = -1;
      return i;
    }
    c = buffer.charCodeAt(i);
    if (c === GT || c === SLASH) {
      t.state = S_BEFORE_ATTRIBUTE_NAME;
      t.sectionStart = -1;
      return i;
    }
  }
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
  this.attrAmp = -1;
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
        if (c !== GT && c !== SLASH) {
          // Attributes in one pass; the stock states take over where it stopped.
          const stop = scanAttributes(this, buffer, at, length);
          this.index = stop + offset;
          continue;
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
