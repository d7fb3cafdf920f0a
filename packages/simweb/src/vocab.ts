// Word lists for names, slugs and text. Fixed lists (not generated) so content reads like a web page
// and a test can grep for a known word.

export const SUBDOMAIN_LABELS = ["www", "blog", "shop", "news", "docs", "forum", "wiki", "m"] as const;

export const SECTIONS = [
  "news", "blog", "products", "docs", "about", "private", "archive", "forum", "help", "events", "tmp", "print", "guides", "reviews",
] as const;

export const USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"] as const;

/** Path names with non-ASCII letters that exist in windows-1252 too; canonical form is UTF-8 percent-encoding. */
export const NON_ASCII_NAMES = ["Café", "Müller", "Straße", "España", "Crème_brûlée", "Zürich", "Ångström", "Façade"] as const;

export const WORDS = [
  "apple", "river", "garden", "stone", "window", "market", "silver", "forest", "harbor", "engine", "paper", "winter",
  "summer", "bridge", "castle", "signal", "rocket", "planet", "coffee", "pepper", "violet", "anchor", "basket", "candle",
  "desert", "feather", "glacier", "hammer", "island", "jacket", "kettle", "ladder", "meadow", "needle", "orchard", "pillow",
  "quarry", "ribbon", "saddle", "tunnel", "valley", "walnut", "yellow", "zephyr", "copper", "marble", "lantern", "compass",
  "thunder", "cactus", "dolphin", "falcon", "granite", "horizon", "journal", "lemon", "mirror", "nectar", "oyster", "puzzle",
] as const;

/** Sentences with non-ASCII text in several scripts (UTF-8 pages) and entities. */
export const UTF8_SENTENCES = [
  "Grüße aus Köln — die Straße ist heute ruhig.",
  "Привет, мир! Это тестовая страница.",
  "Καλημέρα κόσμε, αυτή είναι μια δοκιμή.",
  "日本語のテキストもここにあります。",
  "中文内容用于测试字符集。",
  "한국어 문장도 포함되어 있습니다.",
  "Crème brûlée &amp; café au lait, s&#39;il vous plaît.",
  "Emoji survive too: 🚀 ✨ 🌍.",
  "Ünïcödé &lt;tags&gt; in text are not tags &#8212; they are entities.",
  "Smörgåsbord &eacute;l&egrave;ve &copy; 2025&nbsp;&hellip;",
] as const;

/** Sentences for windows-1252 pages: only characters that encoding has. */
export const LATIN1_SENTENCES = [
  "Grüße aus Köln – die Straße ist heute ruhig.",
  "Crème brûlée & café au lait, s’il vous plaît.",
  "Prix: 12,50 € “TTC” … merci.",
  "Niño, año, señor: ¿qué tal? ¡Olé!",
  "Smörgåsbord &eacute;l&egrave;ve &copy; 2025&nbsp;&hellip;",
  "Ünïcödé &lt;tags&gt; in text are not tags &#8212; they are entities.",
] as const;

export const LANGS = ["en", "de", "fr", "es", "ru", "ja"] as const;
