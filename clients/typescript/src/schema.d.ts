/**
 * Generated from openapi.json by `npm run openapi` (openapi-typescript). Do not edit by hand.
 */

export interface paths {
    "/api/v1/markets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List events
         * @description Open events, busiest first (24-hour volume); each event carries its top three markets.
         *
         *     Without `category`, `league` or `q` the list is the trending one.
         *
         *     `league` overrides `category`. An unknown `league` key answers 200 with an empty list (`count` 0): leagues come and go with the events on offer, so a key that worked yesterday is not an error today.
         *
         *     `q` searches event titles and every market question (not only the three shown), case-insensitively; it is combined with `league` or `category` when given. An empty `q` means no search.
         *
         *     Parameter values are case-insensitive for `category` and `league`. Unknown query parameters are ignored; a parameter given twice is a 400.
         *
         *     `status`: `open` (default) lists open events that have at least one open market, busiest first; `closed` lists events whose markets are all closed (resolved, voided or ended), most recently closed first, kept listable for good. `q`, `category` and `league` work with both.
         *
         *     Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` (with the same `status`, `category`, `league` and `q`) for the next page. An open walk keeps the ranking its first page showed: it returns every event that was listed when it began exactly once, in that order, however volumes move meanwhile (an event that closed since still appears, as it is now). A ranking stays walkable for 15 minutes after the next one replaced it; an older cursor is a 400 saying to start again. A closed walk never skips or repeats an event while others close: they appear before its first page.
         *
         *     Examples:
         *     - Trending events: `GET /api/v1/markets`
         *     - Football, 10 events: `GET /api/v1/markets?category=Football&limit=10`
         *     - One league: `GET /api/v1/markets?league=epl`
         *     - Search: `GET /api/v1/markets?q=bitcoin&limit=5`
         *     - Closed events, newest closed first: `GET /api/v1/markets?status=closed&limit=10`
         */
        get: operations["listMarkets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/by-id": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get many markets by id
         * @description Up to 100 markets in one request, each with the slug of its event, in the order their ids were asked for: for a client holding market ids (calls, combo legs, its own watch list) that would otherwise make one request per id.
         *
         *     Each market is exactly as `/api/v1/markets/{eventSlug}` shows it (quotes, `platform_split`, resolution included). Ids no market has are listed in `missing`: the batch is still a 200. An id asked for twice is answered twice.
         *
         *     `ids` missing, empty, with more than 100 ids, or with an item that is not a market id is a 400 naming the rule.
         *
         *     Examples:
         *     - Three markets: `GET /api/v1/markets/by-id?ids=540060%2C540061%2C540062`
         */
        get: operations["getMarketsById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/{eventSlug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an event
         * @description One event with all its markets, live odds in every format and `platform_split` on each market. An unknown slug is a 404.
         *
         *     A closed event answers for good (the closed list names it for good): a day after it closed its page leaves the live store and is built again from the records when asked for, which can add a moment to the first answer; a 503 with `Retry-After` when that takes over 2 s. The same holds for its history, book, candles, its markets by id and their calls.
         *
         *     Examples:
         *     - An event: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24`
         */
        get: operations["getMarketEvent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/by-id/{marketId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the event of a market
         * @description The event holding a market, in the same body as `/api/v1/markets/{eventSlug}`: for a client that holds only a market id (a call's or a combo leg's `market_id`, a live match's `result`). Resolved markets are included: they carry `resolved_outcome` and `resolved_at`.
         *
         *     An unknown market id is a 404; one that is not a market id at all (other characters than letters, digits, `-` and `_`, or over 100 characters) is a 400.
         *
         *     Examples:
         *     - The event of a market: `GET /api/v1/markets/by-id/540060`
         */
        get: operations["getMarketEventById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/{eventSlug}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Price history
         * @description The chance of one market's first outcome over time, ascending `t` (Unix seconds).
         *
         *     Points are buckets aligned in UTC: 5 minutes for `1d`, an hour for `1w`, 3 hours for `1m` and one day for `max` (one week once the history is longer than 500 days). Each point is the close of its bucket's candle (the chance as it stood at the end of the bucket, as `/candles` gives it) at the bucket's start; a bucket without a point carries the previous close; a resolved market ends with a point at `resolved_at` with its final price.
         *
         *     `market` defaults to the event's first market. An unknown event, or a `market` that is not one of the event's markets, is a 404; a `range` other than 1d, 1w, 1m or max is a 400. A market with no recorded history yet answers 200 with no points.
         *
         *     Examples:
         *     - The first market, last week: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/history`
         *     - One market, everything: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/history?market=540046&range=max`
         */
        get: operations["getMarketHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/{eventSlug}/candles": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Candles
         * @description Open, high, low and close of the chance of an outcome, per interval, for up to 20 markets of one event, over any window the interval still keeps: `1m` for 7 days, `5m` for 60 days, `1h` and `1d` for good; with the trades printed on the outcome's token and its best bid and ask over each interval.
         *
         *     `fields` picks what each candle carries, a comma-separated list: `ohlc` (`open`, `high`, `low`, `close` of the chance), `volume` (`volume` in shares, `notional` in dollars, `trades`, `vwap`) and `quotes` (`bid` and `ask`, each `{open, high, low, close}` or null when that side of the book was empty throughout the bucket). Default `ohlc,volume`; a field not asked for is absent from the candles; a name outside the three is a 400. Trades go into buckets by the exchange's trade time. `volume`, `notional` and `trades` are 0 in a bucket without a trade and null in buckets before the market's trade data begins (never 0 there); `vwap` is null without a trade. A gap carries the bid and ask closes forward as it does the chance's.
         *
         *     Candles are aligned to the interval in UTC (`t` is the bucket start). A bucket without a point carries the previous close forward (open = high = low = close); there is no candle before a market's first recorded point; a resolved market's last candle is the one holding `resolved_at` and closes at its final price (1 or 0). Outcome 1 of a two-outcome market is 1 − outcome 0 (its high the complement of the low).
         *
         *     `start` and `end` are Unix seconds, `start < end`; without them the window is the last 500 intervals up to now. A window of more than 2,000 candles per market is a 400, as is one that starts before the interval's retention (the message names the interval that still covers it). An unknown event, or a `market` that is not one of the event's markets, is a 404.
         *
         *     A window that ended before the current bucket (and the 2-minute margin for late points) never changes: it is served with `Cache-Control: public, max-age=86400, immutable` and a strong `ETag` (`If-None-Match` gets a 304). A window reaching the current bucket is live data (15 s).
         *
         *     Examples:
         *     - Every market of an event, hourly, the last 500 hours: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/candles`
         *     - One market by the minute: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/candles?market=540046&interval=1m`
         *     - Two markets, daily: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/candles?market=540046%2C540047&interval=1d`
         *     - Volume and the book top by the 5 minutes, no chance: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/candles?market=540046&interval=5m&fields=volume%2Cquotes`
         *     - The second outcome with everything: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/candles?market=540046&outcome=1&fields=ohlc%2Cvolume%2Cquotes`
         */
        get: operations["getMarketCandles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/{eventSlug}/book": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Order book
         * @description The order book of one market of the event: per outcome, bids (highest first) and asks (lowest first) as `{price, size}`, up to `depth` levels a side. Its first levels are the outcome's `best_bid` and `best_ask` on `/api/v1/markets/{eventSlug}`.
         *
         *     The ingestor publishes a book a few times a second at most, and within about a second of a change while the market trades; `as_of` says when the last change shown was applied. A market with no book held (closed, resolved, or not traded yet) answers 200 with empty sides and `as_of` null.
         *
         *     `market` defaults to the event's first market. An unknown event, or a `market` that is not one of the event's markets, is a 404; a `depth` that is not an integer from 1 to 50 is a 400.
         *
         *     Examples:
         *     - The first market, 10 levels: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/book`
         *     - One market, 50 levels: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/book?market=540046&depth=50`
         */
        get: operations["getMarketBook"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/markets/{eventSlug}/trades": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Trades
         * @description The trade tape of an event: every match the exchange printed on its markets' outcome tokens, newest first. A match between a Yes and a No order prints on both tokens, so it is two trades, one per outcome, as the exchange prints them. `side` is the taker's side on that outcome's token; `notional` is price × size in dollars; `at` is the exchange's time of the match. Each trade is recorded once, however often the feed delivers it; its `id` is stable.
         *
         *     `market`: comma-separated market ids of the event, at most 20 (default every market of the event); an id that is not one of the event's markets is a 404. `outcome`: an outcome index (default every outcome); one that a market asked for does not have is a 400. `start` (inclusive) and `end` (exclusive) are Unix seconds, `start < end`. Trades are kept for TRADES_RETENTION_DAYS (30 days by default): a `start` or an `end` before that is a 400 saying so.
         *
         *     Paging: `limit` 1 to 1000 (default 100); every page carries `next_cursor` (null on the last page); pass it as `cursor` with the same parameters for the next, older page. A walk never repeats or skips a trade while new ones arrive: they appear before the walk's first page. Live data (15 s).
         *
         *     Examples:
         *     - The latest trades of an event: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/trades`
         *     - One market's Yes trades, a page of 1,000: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/trades?market=540046&outcome=0&limit=1000`
         *     - Every market's first outcome, 500 a page: `GET /api/v1/markets/serie-a-nap-ata-2026-11-24/trades?outcome=0&limit=500`
         */
        get: operations["getMarketTrades"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live matches
         * @description Every match in play (the sports feed says live and not ended), busiest first.
         *
         *     `result` lists home, draw (only where the event has a draw market) and away, each with its chance and the id of the moneyline market to call it on: for a soccer match the Yes chance of each of its three Yes/No markets, for a two-way game the chance of each team's outcome of its one moneyline market. A match without a moneyline market has an empty `result`.
         *
         *     Examples:
         *     - Matches in play: `GET /api/v1/live`
         */
        get: operations["listLiveMatches"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/calls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List calls
         * @description Public calls, newest first (by `made_at`, then id).
         *
         *     With `market`, only that market's calls, and the response adds `platform_split`: how many people's latest call on the market is on each outcome, in outcome order (one per person; empty when nobody has called it).
         *
         *     A `market` id nobody has called — including an id the service does not know — answers 200 with `count` 0, `calls` [] and `platform_split` []: markets come and go with the catalog, so an id that has no calls is an empty list, not an error.
         *
         *     Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. A walk never skips or repeats an item while new ones arrive: new items appear at the head of the list, before the walk's first page. The first page is the live list (cached 15 s); pages after it are read from the records themselves.
         *
         *     A walk returns every call that was on the list when its first page was made, exactly once; each page shows the calls as they are now (a call settled since shows its result). 503 while the records have not been built yet (a service just started).
         *
         *     Examples:
         *     - Latest calls: `GET /api/v1/calls`
         *     - Calls on one market: `GET /api/v1/calls?market=540193&limit=10`
         */
        get: operations["listCalls"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/calls/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a call
         * @description One call as in its public link: the caller, the pick, the chance when it was made, its status and profit, the thesis and its updates (oldest first). An unknown id is a 404.
         *
         *     Examples:
         *     - A call: `GET /api/v1/calls/GiGxeaJUak`
         */
        get: operations["getCall"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{handle}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a record
         * @description A person's public record: calls, settled, won, right_pct, profit on 10 (all time and the last 7 days), XP, streak, followers, following, copies, bio and interests.
         *
         *     The handle matches case-insensitively, with or without a leading `@` (`@Alice`, `alice` and `ALICE` are the same person); the response spells it as the person does. An unknown handle is a 404.
         *
         *     `right_pct` = round(100 × won ÷ (won + lost)), 0 with no won or lost calls (void calls never count). `streak` counts won calls back from the most recently settled non-void call. `xp` includes XP from won combos.
         *
         *     Skill (docs/skill.md): `brier` is the mean of (chance_at_call − outcome)² over settled won and lost calls (lower is better; always calling 50 % scores 0.25); `calibration` splits those calls into ten buckets of chance_at_call, each with its calls, mean chance and share won; `clv` is the mean of the market's closing chance of the called outcome minus chance_at_call (over those calls whose market has a closing chance; positive: the market moved toward the picks); `ranks` is the person's rank on each all-time board, null where they are not on it. Everything needed to recompute them is public: the person's calls and each market's `closing_chance`.
         *
         *     With `category`, brier, calibration, clv and ranks describe only the calls on markets of that category (ranks: the category's boards, `week` its week board); the rest of the record stays whole. Read as committed: a settlement shows at once.
         *
         *     Examples:
         *     - A record: `GET /api/v1/users/moonshot_max`
         *     - With @, any case: `GET /api/v1/users/%40Moonshot_Max`
         *     - Skill in one category: `GET /api/v1/users/moonshot_max?category=Football`
         */
        get: operations["getUser"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{handle}/calls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A person's calls
         * @description A person's calls, newest first, in the same shape as the call list; `status` filters them (omitted means all).
         *
         *     The handle matches case-insensitively, with or without a leading `@`; `handle` in the response is spelled as the person does. An unknown handle is a 404; a person with no calls (of that status) gives an empty list.
         *
         *     Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. A walk never skips or repeats an item while new ones arrive: new items appear at the head of the list, before the walk's first page. Every page is read from the records themselves, so a call shows its new status the moment it settles.
         *
         *     With `status`, a call that leaves the filter during a walk (an open call settles) is not on later pages, and one that joins it shows up where its `made_at` places it if the walk has not passed that point yet; no call is ever shown twice.
         *
         *     Examples:
         *     - All calls: `GET /api/v1/users/moonshot_max/calls`
         *     - Won calls: `GET /api/v1/users/%40moonshot_max/calls?status=won&limit=10`
         */
        get: operations["listUserCalls"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/leaderboard": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Leaderboard
         * @description Public records ranked on settled calls, ordered by `rank`.
         *
         *     `sort`: `profit` (default) by total profit on 10; `right` by right_pct among people with 5 or more settled calls only; `xp` by XP; `week` by profit of calls settled in the last 7 days (the same as `sort=profit&window=week`); `clv` by mean closing-line value, highest first, and `brier` by Brier score, lowest first, both among people with 10 or more settled calls (docs/skill.md). Ties go to more settled calls, then handle (alphabetical).
         *
         *     `window` (`day`, `week`, `month`: the last 24 hours, 7 days, 30 days; `all`, the default) counts only the calls settled in it; `category` or `league` (`league` overrides `category`) only the calls on markets of that field. On such a board a row's settled, won, right_pct, profit_on_10, xp, clv and brier are those calls' (XP without combos); profit_7d and streak are the whole record. An unknown league gives an empty board.
         *
         *     `around=<handle>`: the page of `limit` rows with that person in the middle (where the ranks allow); an empty page when they are not on the board, 404 when no one has the handle.
         *
         *     Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. The cursor keeps the ranking the walk started from: ranks change as calls settle, and a walk shows each person once, at the rank they had on its first page. The all-time boards of every field keep their rankings for 15 minutes after the next one replaced them (an older cursor is a 400 saying to start again) and hold the top 1,000; a board of a window or a field is ranked as of the moment of its first page, which its cursor carries. 503 while the records have not been built yet.
         *
         *     Examples:
         *     - By profit: `GET /api/v1/leaderboard`
         *     - Most often right: `GET /api/v1/leaderboard?sort=right&limit=10`
         *     - Best calibrated this month: `GET /api/v1/leaderboard?sort=brier&window=month`
         *     - Beat the closing line in football: `GET /api/v1/leaderboard?sort=clv&category=Football`
         *     - Where one person stands: `GET /api/v1/leaderboard?sort=profit&around=moonshot_max&limit=5`
         */
        get: operations["getLeaderboard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/combos": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List combos
         * @description Public combos of one status, newest first: open (default), won, lost or void. `status` in the response is the filter applied.
         *
         *     A combo is lost as soon as any leg is lost, void when every leg is void, won when every leg is settled with none lost and at least one won; otherwise open. `chance` and `wins_on_10` are fixed when the combo is made.
         *
         *     Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. A walk never skips or repeats an item while new ones arrive: new items appear at the head of the list, before the walk's first page. The first page is the live list (cached 15 s); pages after it are read from the records themselves.
         *
         *     A combo that leaves the status during a walk (an open combo settles) is not on later pages, and one that joins it shows up where its `made_at` places it if the walk has not passed that point yet; no combo is ever shown twice. Each leg carries its event's slug (`event`). 503 while the records have not been built yet.
         *
         *     Examples:
         *     - Open combos: `GET /api/v1/combos`
         *     - Won combos: `GET /api/v1/combos?status=won&limit=5`
         */
        get: operations["listCombos"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/odds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Convert odds
         * @description Writes a chance in every odds format, with what 10 wins, the profit on 10 of a right call and the XP it would earn.
         *
         *     The answer is exactly the `odds` an outcome of that chance shows anywhere in this API: one function writes both.
         *
         *     `chance` must be a plain decimal that is 0, 1, or from 0.001 to 0.999 — the chances the service shows (a resolved market's outcomes are 1 and 0; the exchange quotes 0.001 to 0.999). `0.0005`, `0.9999`, `1.5`, `abc`, `1e-3`, `0x1`, `NaN`, `Infinity` and an empty or missing value are 400s: past the exchange's extreme ticks no format is faithful (a win would pay 0.00).
         *
         *     At the extremes every format stays finite and honest: `percent` shows decimals where whole-number rounding would say 0% or 100% (`0.1%`, `99.9%`); `fractional` is the closest n/d with d ≤ 1000, exact for every 0.001 tick (`999/1`, `1/199`, `1/999`); `american` is a real line (`+99900`, `-99900`); `wins_on_10` and `profit_on_10` follow from the chance exactly.
         *
         *     A certainty keeps the formats that have a value and no others: chance 1 is `100%`, `100¢`, decimal `1.00`, `wins_on_10` 10, `profit_on_10` 0, with `fractional` and `american` null; chance 0 is `0%`, `0¢`, with `decimal`, `fractional`, `american`, `wins_on_10` and `profit_on_10` null.
         *
         *     Examples:
         *     - One in four: `GET /api/v1/odds?chance=0.25`
         *     - A favourite: `GET /api/v1/odds?chance=0.8`
         *     - A resolved winner: `GET /api/v1/odds?chance=1`
         */
        get: operations["convertOdds"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/exports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The archive: files of closed days
         * @description Every closed UTC day is written once as files anyone may take (docs/archive.md): `candles` (every series at the finest interval held for the day), `trades` (once the service records trades), `markets` (the catalog at the end of the day), `calls` and `combos` (made or settled that day), each as Parquet (zstd) and as gzipped NDJSON. This lists them, newest day first, then dataset and format, with each file's rows, bytes and SHA-256.
         *
         *     A day is written a few minutes after it ends, once its candles are rolled up; a file never changes once listed. Download it at `url` (`GET /api/v1/exports/{date}/{file}`).
         *
         *     `start` and `end` are UTC dates, both inclusive; `start` after `end` is a 400. Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` with the same `dataset`, `start` and `end`.
         *
         *     Examples:
         *     - The newest files: `GET /api/v1/exports`
         *     - Candles of November 2026: `GET /api/v1/exports?dataset=candles&start=2026-11-01&end=2026-11-30`
         */
        get: operations["listExports"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live stream (Server-Sent Events)
         * @description Price moves, match scores, settlements and new calls as they happen, as [Server-Sent Events](https://html.spec.whatwg.org/multipage/server-sent-events.html): open it with `EventSource` in a browser or `curl -N`.
         *
         *     Each message has `event:` (`price`, `score`, `settlement`, `call`, `trade`, `reset`), `id:` (a stream id, `<ms>-<seq>`) and `data:` (one line of JSON; schemas below, one per `event:`). A comment line (`: heartbeat`) is sent every 15 s so proxies keep the connection open.
         *
         *     Resume: reconnect with the last id received in `Last-Event-ID` (EventSource does this by itself) or `?last_event_id=`; every message after it is sent first, then live ones, without a gap, as long as the id is within the retention window (at least 10 minutes). Otherwise `event: reset` comes first: something was missed, re-read what you hold.
         *
         *     Limits: opening a stream counts as one request against the rate limit (429 past it); at most 10 open streams per client IP at once, over all servers (429 past that); a client that does not read what is sent (about 1 MB behind) is disconnected. Every server of the service serves the same stream.
         *
         *     A bad `topics` or a malformed `last_event_id` is a 400 and opens nothing.
         */
        get: operations["openStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/exports/{date}/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download one file of the archive
         * @description One dataset of one closed UTC day as it was written (`/api/v1/exports` lists them with their rows, bytes and SHA-256; docs/archive.md gives every dataset's columns). `file` is `<dataset>.parquet` (Parquet, zstd) or `<dataset>.ndjson.gz` (one JSON object a line, gzipped; served as `application/gzip`, not decompressed on the way).
         *
         *     A file never changes: `Cache-Control: public, max-age=31536000, immutable`, `ETag` is its SHA-256. `Range` (one range of bytes) answers 206 with that part, so a broken download resumes where it stopped (`If-Range` with the ETag makes sure it is the same file); `If-None-Match` answers 304; `HEAD` gives the headers only. A download counts as one request against the rate limit.
         *
         *     A day not written (yet) is a 404; a `date` or `file` that cannot be one is a 400 naming the rule.
         */
        get: operations["getExportFile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        BookLevel: {
            price: number;
            /** @description Shares resting at that price */
            size: number;
        };
        CalibrationBucket: {
            /** @description Lower bound of chance_at_call (included) */
            from: number;
            /** @description Upper bound (excluded; the last bucket includes 1) */
            to: number;
            /** @description Settled won and lost calls in the bucket */
            calls: number;
            /** @description Mean chance_at_call of those calls, 4 decimals; null when empty */
            predicted: number | null;
            /** @description Share of those calls that won, percent with 1 decimal; null when empty */
            won_pct: number | null;
        };
        /** @description A public pick by a person on one outcome of a market */
        Call: {
            id: string;
            user: components["schemas"]["CallUser"];
            market_id: string;
            /** @description Event slug */
            event: string;
            question: string;
            /** @description Outcome name */
            outcome: string;
            /** @description Zero-based index of the outcome */
            outcome_index: number;
            /** @description Chance when the pick was made; never changes */
            chance_at_call: number;
            /** @description The caller's written reasoning */
            thesis: string;
            copied_from: components["schemas"]["CopiedFrom"] | null;
            /** @description True when the call fades (bets against) another */
            is_fade: boolean;
            /** @enum {string} */
            status: "open" | "won" | "lost" | "void";
            /** @description Null while open; won 10 ÷ chance − 10, lost −10, void 0 */
            profit_on_10: number | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC timestamp
             */
            made_at: string;
            settled_at: string | null;
            url: string;
        };
        /** @description The single-call response: a subset of Call with its thesis updates */
        CallDetail: {
            id: string;
            user: components["schemas"]["CallSubsetUser"];
            question: string;
            outcome: string;
            /** @description Chance when the pick was made; never changes */
            chance_at_call: number;
            /** @enum {string} */
            status: "open" | "won" | "lost" | "void";
            /** @description Null while open; won 10 ÷ chance − 10, lost −10, void 0 */
            profit_on_10: number | null;
            thesis: string;
            /** @description Oldest first */
            thesis_updates: components["schemas"]["ThesisUpdate"][];
            url: string;
        };
        CallListResponse: {
            /** @constant */
            ok: true;
            /** @description Number of calls returned */
            count: number;
            /** @description Present when `market` is given: people whose latest call on the market is on each outcome, in outcome order; empty when nobody has called it */
            platform_split?: number[];
            /** @description Newest first */
            calls: components["schemas"]["Call"][];
            /** @description Pass as `cursor` (same path and parameters; `limit` may change) for the next page; null on the last page. Opaque and signed: an altered cursor, or one from another list, is a 400. */
            next_cursor: string | null;
        };
        CallResponse: {
            /** @constant */
            ok: true;
            call: components["schemas"]["CallDetail"];
        };
        CallSubsetUser: {
            handle: string;
        };
        CallUser: {
            handle: string;
            /** @description Avatar image URL, or null when the person has none */
            avatar: string | null;
        };
        Candle: {
            /** @description Bucket start, Unix seconds, aligned to the interval in UTC */
            t: number;
            /** @description With `ohlc`. Chance at the first point of the bucket (the previous close when the bucket had none) */
            open?: number;
            /** @description With `ohlc`. Highest chance in the bucket */
            high?: number;
            /** @description With `ohlc`. Lowest chance in the bucket */
            low?: number;
            /** @description With `ohlc`. Chance at the last point of the bucket; a resolved market's last candle closes at its final price */
            close?: number;
            /** @description With `volume`. Shares printed on this outcome's token in the bucket (by the exchange's trade time); 0 without a trade; null before the market's trade data begins */
            volume?: number | null;
            /** @description With `volume`. Σ price × size of those trades, dollars (to a millionth); 0 without a trade; null before the trade data begins */
            notional?: number | null;
            /** @description With `volume`. Trades printed; 0 without a trade; null before the trade data begins */
            trades?: number | null;
            /** @description With `volume`. notional ÷ volume (to a millionth); null without a trade */
            vwap?: number | null;
            /** @description With `quotes`. The outcome's best bid over the bucket; null when that side was empty throughout (outcome 1's bid is 1 − outcome 0's ask) */
            bid?: components["schemas"]["QuoteCandle"] | null;
            /** @description With `quotes`. The outcome's best ask over the bucket; null when that side was empty throughout (outcome 1's ask is 1 − outcome 0's bid) */
            ask?: components["schemas"]["QuoteCandle"] | null;
        };
        CandlesResponse: {
            /** @constant */
            ok: true;
            /** @description The event slug */
            event: string;
            /** @enum {string} */
            interval: "1m" | "5m" | "1h" | "1d";
            /** @description Window start, Unix seconds, aligned down to the interval */
            start: number;
            /** @description Window end (exclusive), Unix seconds, aligned up to the interval */
            end: number;
            markets: components["schemas"]["MarketCandles"][];
        };
        /** @description 2 to 6 picks that must all happen */
        Combo: {
            id: string;
            user: components["schemas"]["ComboUser"];
            /** @description The legs' chances multiplied, when the combo was made; never changes */
            chance: number;
            /** @description 10 ÷ chance: what 10 wins if every leg happens */
            wins_on_10: number;
            /** @enum {string} */
            status: "open" | "won" | "lost" | "void";
            xp_awarded: number;
            legs: components["schemas"]["Leg"][];
            /**
             * Format: date-time
             * @description ISO 8601 UTC timestamp
             */
            made_at: string;
            url: string;
        };
        ComboListResponse: {
            /** @constant */
            ok: true;
            /**
             * @description The applied filter
             * @enum {string}
             */
            status: "open" | "won" | "lost" | "void";
            count: number;
            /** @description Newest first */
            combos: components["schemas"]["Combo"][];
            /** @description Pass as `cursor` (same path and parameters; `limit` may change) for the next page; null on the last page. Opaque and signed: an altered cursor, or one from another list, is a 400. */
            next_cursor: string | null;
        };
        ComboUser: {
            handle: string;
        };
        /** @description The call this one copies */
        CopiedFrom: {
            /** @description Id of the copied call */
            id: string;
            /** @description Handle of the person whose call was copied */
            handle: string;
        };
        Error: {
            /** @constant */
            ok: false;
            error: {
                /** @enum {string} */
                code: "bad_request" | "not_found" | "method_not_allowed" | "request_timeout" | "rate_limited" | "headers_too_large" | "unavailable" | "internal";
                message: string;
            };
        };
        Event: {
            slug: string;
            title: string;
            /**
             * @description Event category
             * @enum {string}
             */
            category: "Football" | "Sport" | "Crypto" | "Politics" | "Economy" | "Tech" | "Culture";
            closes_at: string | null;
            /** @description Total traded volume */
            volume: number;
            game: components["schemas"]["Game"] | null;
            markets: components["schemas"]["Market"][];
            market_count: number;
            url: string;
        };
        /** @description An event in the market list */
        EventCard: {
            slug: string;
            title: string;
            /**
             * @description Event category
             * @enum {string}
             */
            category: "Football" | "Sport" | "Crypto" | "Politics" | "Economy" | "Tech" | "Culture";
            /** @description At most the top three markets */
            markets: components["schemas"]["MarketCard"][];
            market_count: number;
            url: string;
        };
        ExportEntry: {
            /**
             * Format: date
             * @description The UTC day the file holds (YYYY-MM-DD)
             */
            date: string;
            /** @enum {string} */
            dataset: "candles" | "trades" | "markets" | "calls" | "combos";
            /** @enum {string} */
            format: "parquet" | "ndjson.gz";
            /** @description Where to download it: `/api/v1/exports/{date}/{dataset}.{format}` on this API */
            url: string;
            rows: number;
            bytes: number;
            /** @description The file's SHA-256, lowercase hex; also its download's ETag */
            sha256: string;
            /** @description The dataset's schema version (docs/archive.md) */
            schema_version: number;
            /**
             * Format: date-time
             * @description When this file was written (ISO 8601 UTC)
             */
            made_at: string;
        };
        ExportListResponse: {
            /** @constant */
            ok: true;
            /** @description Newest day first, then dataset, then format */
            exports: components["schemas"]["ExportEntry"][];
            /** @description Pass as `cursor` for the next page; null on the last page */
            next_cursor: string | null;
        };
        /** @description Match data of an event */
        Game: {
            live: boolean;
            /** @description home-away */
            score: string;
            /** @description As the feed sends it: "74", "5:18" */
            clock: string;
            /** @description As the feed sends it: 1H, HT, Q4 … */
            period: string;
            league: string;
            teams: components["schemas"]["Team"][];
        };
        HistoryPoint: {
            /** @description Unix seconds */
            t: number;
            /** @description Chance, 0 to 1 */
            chance: number;
        };
        LeaderboardResponse: {
            /** @constant */
            ok: true;
            /** @enum {string} */
            sort: "profit" | "right" | "xp" | "week" | "clv" | "brier";
            /**
             * @description The window applied (`week` for sort=week)
             * @enum {string}
             */
            window: "day" | "week" | "month" | "all";
            /** @description The category applied; null: every category */
            category: string | null;
            /** @description The league applied; null: every league */
            league: string | null;
            count: number;
            /** @description Ordered by rank */
            rows: components["schemas"]["LeaderboardRow"][];
            /** @description Pass as `cursor` (same path and parameters; `limit` may change) for the next page; null on the last page. Opaque and signed: an altered cursor, or one from another list, is a 400. */
            next_cursor: string | null;
        };
        /** @description A person on a board. On a board of one window or field, settled, won, right_pct, profit_on_10, xp, clv and brier count only the calls settled in that window and field (and XP no combos); profit_7d and streak are always the whole record. */
        LeaderboardRow: {
            rank: number;
            handle: string;
            display_name: string;
            /** @description Avatar image URL, or null when the person has none */
            avatar: string | null;
            right_pct: number;
            settled: number;
            won: number;
            /** @description US dollars on a notional stake of 10 per call, 2 decimals */
            profit_on_10: number;
            /** @description US dollars on a notional stake of 10 per call, 2 decimals */
            profit_7d: number;
            xp: number;
            streak: number;
            /** @description Closing-line value: mean of the market's closing chance of the called outcome minus chance_at_call, over settled won and lost calls whose market has a closing chance, in chance units (0.05 = 5 points), 4 decimals; positive means the market moved toward the picks; null with none */
            clv: number | null;
            /** @description Brier score: mean of (chance_at_call − outcome)² over settled won and lost calls, 4 decimals; lower is better (always calling 50 % scores 0.25); null with none */
            brier: number | null;
        };
        LeagueEntry: {
            /** @description The category the league belongs to */
            group: string;
            label: string;
            /** @description Key usable as the `league` parameter */
            league: string;
        };
        /** @description One pick of a combo */
        Leg: {
            market_id: string;
            /** @description Slug of the leg's event (GET /api/v1/markets/{event}; or /api/v1/markets/by-id/{market_id}) */
            event: string;
            question: string;
            outcome: string;
            outcome_index: number;
            /** @description Chance when the pick was made; never changes */
            chance_at_call: number;
            /** @enum {string} */
            status: "open" | "won" | "lost" | "void";
        };
        LiveMatch: {
            slug: string;
            title: string;
            league: string;
            score: string;
            clock: string;
            period: string;
            teams: components["schemas"]["Team"][];
            result: components["schemas"]["Result"][];
            markets: number;
            url: string;
        };
        LiveMatchesResponse: {
            /** @constant */
            ok: true;
            /** @description Number of matches in play */
            count: number;
            matches: components["schemas"]["LiveMatch"][];
        };
        Market: {
            id: string;
            question: string;
            /** @description Short label, e.g. the side the market is about */
            label: string;
            /** @description Sports market type in snake_case (moneyline, totals, spreads, both_teams_to_score …); null for non-sport */
            kind: string | null;
            outcomes: components["schemas"]["QuotedOutcome"][];
            /** @description Callers on each outcome (one per person), in outcome order; empty when nobody has called */
            platform_split: number[];
            closes_at: string | null;
            closed: boolean;
            /** @description Once resolved: the index of the winning outcome, or null when the market was voided. Null while unresolved (see resolved_at). */
            resolved_outcome: number | null;
            /** @description When the market resolved; null while it has not. The history then ends with a point at the final price at this time. */
            resolved_at: string | null;
            /** @description While a resolved market's calls are being settled (a big market settles in parts, over seconds to a minute), how far it has got; null otherwise (before the resolution, and once every call is settled). The people's records and the boards count a call from the moment it is settled. */
            settling: {
                /** @description Calls on the market settled so far */
                settled: number;
                /** @description Calls the settlement began with */
                calls: number;
            } | null;
            /** @description 24-hour change in chance */
            change_24h: number;
            url: string;
        };
        MarketBookResponse: {
            /** @constant */
            ok: true;
            market_id: string;
            /**
             * Format: date-time
             * @description When the last change shown was applied (ISO 8601 UTC); null when no book is held for the market (closed, or not traded yet)
             */
            as_of: string | null;
            /** @description In outcome order, as the market lists them */
            outcomes: {
                name: string;
                /** @description Highest price first; the first is the outcome's `best_bid` */
                bids: components["schemas"]["BookLevel"][];
                /** @description Lowest price first; the first is the outcome's `best_ask` */
                asks: components["schemas"]["BookLevel"][];
            }[];
        };
        MarketCandles: {
            market_id: string;
            question: string;
            /** @description The outcome the chances are of */
            outcome: string;
            /** @description Ascending t; none before the market's first recorded point; gaps carried forward flat */
            candles: components["schemas"]["Candle"][];
        };
        MarketCard: {
            id: string;
            question: string;
            outcomes: components["schemas"]["Outcome"][];
        };
        MarketEventResponse: {
            /** @constant */
            ok: true;
            /** @description True while the order-book feed is connected and its last message is under 30 s old. */
            live: boolean;
            event: components["schemas"]["Event"];
        };
        MarketHistoryResponse: {
            /** @constant */
            ok: true;
            market_id: string;
            question: string;
            /** @description The first outcome: every point is its chance */
            outcome: string;
            /** @enum {string} */
            range: "1d" | "1w" | "1m" | "max";
            /** @description Ascending t; the close of each bucket at its start (5 min for 1d, 30 min for 1w, 3 h for 1m, 1 day for max) */
            points: components["schemas"]["HistoryPoint"][];
        };
        MarketListResponse: {
            /** @constant */
            ok: true;
            /** @description True while the order-book feed is connected and its last message is under 30 s old; false means prices are the last known. */
            live: boolean;
            /** @description Number of events returned */
            count: number;
            /** @description In order Sport, Football, Crypto, Politics, Economy, Tech, Culture */
            categories: ("Football" | "Sport" | "Crypto" | "Politics" | "Economy" | "Tech" | "Culture")[];
            leagues: components["schemas"]["LeagueEntry"][];
            events: components["schemas"]["EventCard"][];
            /** @description Pass as `cursor` for the next page; null on the last page */
            next_cursor: string | null;
        };
        MarketsByIdResponse: {
            /** @constant */
            ok: true;
            /** @description True while the order-book feed is connected and its last message is under 30 s old. */
            live: boolean;
            /** @description Number of markets found (the length of `markets`) */
            count: number;
            /** @description The markets found, in the order their ids were asked for */
            markets: {
                /** @description Slug of the event holding the market (`/api/v1/markets/{eventSlug}`) */
                event: string;
                market: components["schemas"]["Market"];
            }[];
            /** @description Ids asked for that no market has, in the order asked */
            missing: string[];
        };
        /** @description The same chance written five ways: exactly what `/api/v1/odds?chance=` answers for that chance. A chance shown is 0, 1 (a resolved market's loser and winner) or from 0.001 to 0.999 (the exchange's extreme ticks). For a certainty the formats that have a value keep it (`0%`/`100%`, `0¢`/`100¢`, decimal `1.00` for 1) and the others are null. */
        Odds: {
            /**
             * @description Whole percent with a % sign; with decimals where whole would say 0% or 100% of a chance that is neither (0.001 → 0.1%, 0.999 → 99.9%)
             * @example 25%
             */
            percent: string;
            /**
             * @description Decimal odds, two decimals. A certainty: `1.00` for chance 1 (the stake back), null for chance 0 (no finite payout)
             * @example 4.00
             */
            decimal: string | null;
            /**
             * @description numerator/denominator: the closest fraction to (1 − chance)/chance with a denominator of at most 1000 (0.999 → 1/999). Null for chance 0 or 1: no fraction describes a certainty
             * @example 3/1
             */
            fractional: string | null;
            /**
             * @description Signed, leading + or - (0.001 → +99900, 0.999 → -99900). Null for chance 0 or 1: no line describes a certainty
             * @example +300
             */
            american: string | null;
            /**
             * @description Whole cents with a cent sign
             * @example 25¢
             */
            price: string;
        };
        OddsResponse: {
            /** @constant */
            ok: true;
            /** @description The chance converted */
            chance: number;
            /** @description What 10 wins: 10 ÷ chance, 2 decimals (10 for chance 1); null for chance 0, which cannot win */
            wins_on_10: number | null;
            /** @description Profit of a right call on 10: 10 ÷ chance − 10, 2 decimals (0 for chance 1: a certainty pays the stake back); null for chance 0 */
            profit_on_10: number | null;
            /** @description XP a right call would earn: 10 + round(90 × (1 − chance)) */
            xp_if_right: number;
            odds: components["schemas"]["Odds"];
        };
        Outcome: {
            name: string;
            /** @description Chance, 0 to 1 */
            chance: number;
            odds: components["schemas"]["Odds"];
        };
        QuoteCandle: {
            /** @description At the first point of the bucket where this side was quoted */
            open: number;
            high: number;
            low: number;
            /** @description At the last point of the bucket where this side was quoted */
            close: number;
        };
        /** @description An outcome with its quotes. `chance` follows from them by the display rule: the midpoint of `best_bid` and `best_ask` while `spread` is 0 to 0.10, else `last_trade_price`; with a one-sided or empty book, the catalog price. A settled market shows its final chance and null quotes. */
        QuotedOutcome: {
            name: string;
            /** @description Chance, 0 to 1 */
            chance: number;
            odds: components["schemas"]["Odds"];
            /** @description Highest bid of the top of book the chance was computed from; null when the book has no bids (or the market is settled) */
            best_bid: number | null;
            /** @description Lowest ask of that top of book; null when the book has no asks (or the market is settled) */
            best_ask: number | null;
            /** @description best_ask − best_bid; null unless both are quoted; negative while the top of book is crossed (bid above ask, a transient state of the exchange), when `chance` is the last trade */
            spread: number | null;
            /** @description Price of the last trade; null before the first one (or once the market is settled) */
            last_trade_price: number | null;
            /** @description The displayed chance of this outcome when its market closed or resolved, recorded once then and never changed (the reference for closing-line value); null while the market is open, or where no chance was known */
            closing_chance: number | null;
        };
        Result: {
            label: string;
            /** @description Chance, 0 to 1 */
            chance: number;
            market_id: string;
        };
        /** @description `event: call` — a call was recorded. */
        StreamCall: {
            /** @description The call id (`/api/v1/calls/{id}`) */
            id: string;
            handle: string;
            /** @description Slug of the event holding the market */
            event: string;
            market_id: string;
            outcome_index: number;
            /** @description Outcome name */
            outcome: string;
            /** @description The chance the call was made at */
            chance: number;
            /**
             * Format: date-time
             * @description When the call was made
             */
            at: string;
        };
        /** @description `event: price` — an outcome's displayed chance or its quotes moved (the quotes are the top of book the chance was computed from). */
        StreamPrice: {
            /** @description Slug of the event holding the market */
            event: string;
            market_id: string;
            outcome_index: number;
            /** @description Outcome name */
            outcome: string;
            /** @description The displayed chance now (the value `/markets/{slug}` shows) */
            chance: number;
            /**
             * Format: date-time
             * @description When the ingestor saw the change
             */
            at: string;
            /** @description Highest bid of the top of book the chance was computed from; null when the book has no bids (or the market is settled) */
            best_bid: number | null;
            /** @description Lowest ask of that top of book; null when the book has no asks (or the market is settled) */
            best_ask: number | null;
            /** @description best_ask − best_bid; null unless both are quoted; negative while the top of book is crossed (bid above ask, a transient state of the exchange), when `chance` is the last trade */
            spread: number | null;
            /** @description Price of the last trade; null before the first one (or once the market is settled) */
            last_trade_price: number | null;
        };
        /** @description `event: reset` — the id given to resume from (`Last-Event-ID` or `last_event_id`) can no longer be resumed from without a gap: events were missed. Re-read what you hold (e.g. `/markets/{slug}`); live events follow. */
        StreamReset: {
            /**
             * @description `unknown_id`: the resume id is older than the retention window, or not from this stream
             * @enum {string}
             */
            reason: "unknown_id";
            message: string;
            retention_seconds: number;
        };
        /** @description `event: score` — a match's score, period or state changed (a clock tick alone sends nothing). */
        StreamScore: {
            /** @description Slug of the event of this match; null when no event is known for it yet */
            event: string | null;
            game_id: string;
            league: string;
            home_team: string;
            away_team: string;
            /** @description home-away */
            score: string;
            /** @description As the feed sends it: 1H, HT, Q4 … */
            period: string;
            /** @description As the feed sends it: "74", "5:18" */
            clock: string;
            live: boolean;
            ended: boolean;
            /**
             * Format: date-time
             * @description ISO 8601 UTC timestamp
             */
            at: string;
        };
        /** @description `event: settlement` — a resolved market's calls and combo legs were settled. */
        StreamSettlement: {
            /** @description Slug of the event holding the market */
            event: string;
            market_id: string;
            /** @description Index of the winning outcome; null when the market was voided */
            resolved_outcome: number | null;
            voided: boolean;
            /** @description The market's closing chance of each outcome, in outcome order (null where none was known); null when none was recorded */
            closing_chances: (number | null)[] | null;
            /** @description Calls settled by this settlement, by result */
            calls: {
                won: number;
                lost: number;
                void: number;
            };
            /** @description Combo legs settled */
            combo_legs: number;
            /** @description Combos whose result this settlement decided */
            combos: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC timestamp
             */
            at: string;
        };
        /** @description `event: trade` — the exchange printed a match on an outcome (one message per outcome token it printed on). */
        StreamTrade: {
            /** @description The trade's id: stable and opaque (the same trade always has the same id) */
            id: string;
            market_id: string;
            outcome_index: number;
            /** @description Outcome name: the token that printed */
            outcome: string;
            /** @description Price per share, dollars (0 to 1) */
            price: number;
            /** @description Shares */
            size: number;
            /** @description price × size, dollars */
            notional: number;
            /**
             * @description The taker's side on this outcome's token
             * @enum {string}
             */
            side: "BUY" | "SELL";
            /**
             * Format: date-time
             * @description The exchange's time of the match: ISO 8601 UTC with milliseconds
             */
            at: string;
            /** @description Slug of the event holding the market */
            event: string;
        };
        Team: {
            name: string;
            abbreviation: string;
            home: boolean;
        };
        ThesisUpdate: {
            body: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC timestamp
             */
            at: string;
        };
        Trade: {
            /** @description The trade's id: stable and opaque (the same trade always has the same id) */
            id: string;
            market_id: string;
            outcome_index: number;
            /** @description Outcome name: the token that printed */
            outcome: string;
            /** @description Price per share, dollars (0 to 1) */
            price: number;
            /** @description Shares */
            size: number;
            /** @description price × size, dollars */
            notional: number;
            /**
             * @description The taker's side on this outcome's token
             * @enum {string}
             */
            side: "BUY" | "SELL";
            /**
             * Format: date-time
             * @description The exchange's time of the match: ISO 8601 UTC with milliseconds
             */
            at: string;
        };
        TradesResponse: {
            /** @constant */
            ok: true;
            /** @description The event slug */
            event: string;
            /** @description Newest first (by `at`, then by id order for trades of the same millisecond) */
            trades: components["schemas"]["Trade"][];
            /** @description Pass as `cursor` (same parameters; `limit` may change) for the next, older page; null on the last page */
            next_cursor: string | null;
        };
        UserCallsResponse: {
            /** @constant */
            ok: true;
            /** @description The handle as the person spells it */
            handle: string;
            count: number;
            /** @description Newest first */
            calls: components["schemas"]["Call"][];
            /** @description Pass as `cursor` (same path and parameters; `limit` may change) for the next page; null on the last page. Opaque and signed: an altered cursor, or one from another list, is a 400. */
            next_cursor: string | null;
        };
        /** @description The person's rank on each all-time board (the category's boards with `category`); null where they are not on it (too few settled calls, or none this week) */
        UserRanks: {
            profit: number | null;
            right: number | null;
            xp: number | null;
            week: number | null;
            clv: number | null;
            brier: number | null;
        };
        UserRecord: {
            handle: string;
            display_name: string;
            /** @description Avatar image URL, or null when the person has none */
            avatar: string | null;
            /** @description Total calls */
            calls: number;
            /** @description Settled calls: won + lost + void */
            settled: number;
            won: number;
            /** @description round(100 × won ÷ (won + lost)); 0 with no such calls. Void calls do not count. */
            right_pct: number;
            /** @description Total profit across settled calls, each scored on 10 */
            profit_on_10: number;
            /** @description Profit of calls settled in the last 7 days */
            profit_7d: number;
            xp: number;
            /** @description Consecutive won calls counting back from the most recently settled non-void call */
            streak: number;
            followers: number;
            following: number;
            /** @description How many times others copied their calls */
            copies: number;
            bio: string;
            /** @description Each a category, or a category and league joined with ": " (e.g. "Football: EPL") */
            interests: string[];
            /**
             * Format: date-time
             * @description ISO 8601 UTC timestamp
             */
            joined_at: string;
            url: string;
            /** @description Brier score: mean of (chance_at_call − outcome)² over settled won and lost calls, 4 decimals; lower is better (always calling 50 % scores 0.25); null with none */
            brier: number | null;
            /** @description Ten buckets of chance_at_call: [0, 0.1), [0.1, 0.2) … [0.9, 1] */
            calibration: components["schemas"]["CalibrationBucket"][];
            /** @description Closing-line value: mean of the market's closing chance of the called outcome minus chance_at_call, over settled won and lost calls whose market has a closing chance, in chance units (0.05 = 5 points), 4 decimals; positive means the market moved toward the picks; null with none */
            clv: number | null;
            ranks: components["schemas"]["UserRanks"];
        };
        UserResponse: {
            /** @constant */
            ok: true;
            user: components["schemas"]["UserRecord"];
            /** @description With `category`: the category whose calls brier, calibration, clv and ranks describe; null: all calls */
            category: string | null;
        };
    };
    responses: {
        /** @description A bad parameter (`bad_request`); the message names the parameter and its rule. */
        BadRequest: {
            headers: {
                "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                "x-request-id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "ok": false,
                 *       "error": {
                 *         "code": "bad_request",
                 *         "message": "limit must be an integer from 1 to 100"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Nothing matches (`not_found`). */
        NotFound: {
            headers: {
                "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                "x-request-id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "ok": false,
                 *       "error": {
                 *         "code": "not_found",
                 *         "message": "no event with slug epl-ars-che-2026-11-20"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Rate limit exceeded (`rate_limited`): 120 requests a minute per client IP. `Retry-After` says how many seconds to wait. */
        RateLimited: {
            headers: {
                "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                "x-request-id": components["headers"]["RequestId"];
                /** @description Seconds until the rate-limit window resets */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "ok": false,
                 *       "error": {
                 *         "code": "rate_limited",
                 *         "message": "too many requests: the limit is 120 a minute per client; try again later"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Unexpected failure (`internal`); the message is generic. */
        Internal: {
            headers: {
                "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                "x-request-id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "ok": false,
                 *       "error": {
                 *         "code": "internal",
                 *         "message": "something went wrong on our side; please try again"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Records are unavailable (`unavailable`): the data store is unreachable or the market data is not built yet. */
        Unavailable: {
            headers: {
                "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                "x-request-id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "ok": false,
                 *       "error": {
                 *         "code": "unavailable",
                 *         "message": "market data is not ready yet; please try again shortly"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description Strong validator of the body; send it back in If-None-Match. */
        ETag: string;
        /** @description Requests allowed per window (a minute) */
        RateLimitLimit: number;
        /** @description Requests left in the current window */
        RateLimitRemaining: number;
        /** @description Unix seconds when the current window resets */
        RateLimitReset: number;
        /** @description The request id (echoes a sane `x-request-id` request header, else generated) */
        RequestId: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listMarkets: {
        parameters: {
            query?: {
                /** @description One of the categories; omitted means trending. Case-insensitive. */
                category?: "Football" | "Sport" | "Crypto" | "Politics" | "Economy" | "Tech" | "Culture";
                /** @description A key from the response's `leagues` list (e.g. `epl`, `nba`, `btc`); overrides `category`. Case-insensitive. An unknown key gives an empty list, not an error. */
                league?: string;
                /** @description Case-insensitive search over event titles and market questions, up to 80 characters. Empty means no search. */
                q?: string;
                /** @description open (default): open events, busiest first; closed: events whose markets are all closed, most recently closed first. Case-insensitive. */
                status?: "open" | "closed";
                /** @description How many events to return. An integer from 1 to 60; default 24. */
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarketListResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketsById: {
        parameters: {
            query: {
                /** @description Market ids: a comma-separated list of 1 to 100 market ids, each 1 to 100 letters, digits, - or _. Answered in the order given; ids nobody knows are listed in `missing`. */
                ids: string[];
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarketsByIdResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketEvent: {
        parameters: {
            query?: never;
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The event slug, as in the service's or the exchange's page address */
                eventSlug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarketEventResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketEventById: {
        parameters: {
            query?: never;
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description A market id, as in a call's or a combo leg's `market_id` */
                marketId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarketEventResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketHistory: {
        parameters: {
            query?: {
                /** @description A market id within the event; default the event's first market. */
                market?: string;
                /** @description One of 1d, 1w, 1m, max; default 1w. */
                range?: "1d" | "1w" | "1m" | "max";
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The event slug */
                eventSlug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarketHistoryResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketCandles: {
        parameters: {
            query?: {
                /** @description Comma-separated market ids of the event, at most 20; default the event's markets (the first 20). */
                market?: string;
                /** @description The outcome index whose chance the candles follow. An integer from 0 to 99; default 0. */
                outcome?: number;
                /** @description One of 1m, 5m, 1h, 1d; default 1h. */
                interval?: "1m" | "5m" | "1h" | "1d";
                /** @description Window start, Unix seconds; default 500 intervals before `end`. */
                start?: number;
                /** @description Window end (exclusive), Unix seconds; default now. */
                end?: number;
                /** @description What each candle carries: a comma-separated list of ohlc, volume, quotes. Default ohlc,volume. */
                fields?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The event slug */
                eventSlug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CandlesResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketBook: {
        parameters: {
            query?: {
                /** @description A market id within the event; default the event's first market. */
                market?: string;
                /** @description Levels per side. An integer from 1 to 50; default 10. */
                depth?: number;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The event slug */
                eventSlug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MarketBookResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getMarketTrades: {
        parameters: {
            query?: {
                /** @description Comma-separated market ids of the event, at most 20; default every market of the event. */
                market?: string;
                /** @description An outcome index: only trades on that outcome's token. Default every outcome. */
                outcome?: number;
                /** @description Window start (inclusive), Unix seconds; default as far back as trades are kept. */
                start?: number;
                /** @description Window end (exclusive), Unix seconds; default now. */
                end?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
                /** @description Trades per page. An integer from 1 to 1000; default 100. */
                limit?: number;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The event slug */
                eventSlug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TradesResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    listLiveMatches: {
        parameters: {
            query?: never;
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LiveMatchesResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    listCalls: {
        parameters: {
            query?: {
                /** @description A market id; when given, only its calls, and the response adds `platform_split`. */
                market?: string;
                /** @description How many calls to return. An integer from 1 to 100; default 25. */
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CallListResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getCall: {
        parameters: {
            query?: never;
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The call id, as in the call's public link */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=30`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=30 */
                    "Cache-Control"?: "public, max-age=30";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CallResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getUser: {
        parameters: {
            query?: {
                /** @description One of the categories: brier, calibration, clv and ranks of the calls in it only. Case-insensitive. */
                category?: "Football" | "Sport" | "Crypto" | "Politics" | "Economy" | "Tech" | "Culture";
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The handle, with or without a leading @; case-insensitive */
                handle: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=30`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=30 */
                    "Cache-Control"?: "public, max-age=30";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    listUserCalls: {
        parameters: {
            query?: {
                /** @description open, won, lost or void; omitted means all. Case-insensitive. */
                status?: "open" | "won" | "lost" | "void";
                /** @description How many calls to return. An integer from 1 to 100; default 25. */
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The handle, with or without a leading @; case-insensitive */
                handle: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=30`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=30 */
                    "Cache-Control"?: "public, max-age=30";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserCallsResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    getLeaderboard: {
        parameters: {
            query?: {
                /** @description profit (default), right (5 or more settled calls), xp, week (profit in the last 7 days), clv (10 or more settled) or brier (10 or more settled, lowest first). Case-insensitive. */
                sort?: "profit" | "right" | "xp" | "week" | "clv" | "brier";
                /** @description day, week, month or all (default): calls settled in the last 24 hours, 7 days, 30 days, or ever. With sort=week only week. Case-insensitive. */
                window?: "day" | "week" | "month" | "all";
                /** @description Only calls on markets of this category. Case-insensitive. */
                category?: "Football" | "Sport" | "Crypto" | "Politics" | "Economy" | "Tech" | "Culture";
                /** @description Only calls on markets of this league or coin key (e.g. `epl`, `nba`, `btc`); overrides `category`. Case-insensitive. An unknown key gives an empty board. */
                league?: string;
                /** @description A handle (with or without @, case-insensitive): the page with that person in the middle. 404 when no one has it. */
                around?: string;
                /** @description How many rows to return. An integer from 1 to 100; default 25. */
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=30`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=30 */
                    "Cache-Control"?: "public, max-age=30";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeaderboardResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    listCombos: {
        parameters: {
            query?: {
                /** @description open (default), won, lost or void. Case-insensitive. */
                status?: "open" | "won" | "lost" | "void";
                /** @description How many combos to return. An integer from 1 to 50; default 20. */
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=15`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=15 */
                    "Cache-Control"?: "public, max-age=15";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ComboListResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    convertOdds: {
        parameters: {
            query: {
                /** @description The chance to convert: a decimal number that is 0, 1, or from 0.001 to 0.999 (the exchange quotes nothing in between), e.g. 0.25. Plain decimal notation only (no exponent), at most 20 characters. */
                chance: number;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=3600`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: "public, max-age=3600";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OddsResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
        };
    };
    listExports: {
        parameters: {
            query?: {
                /** @description Only this dataset: candles, trades, markets, calls or combos. Case-insensitive. */
                dataset?: "candles" | "trades" | "markets" | "calls" | "combos";
                /** @description The first day listed (UTC, YYYY-MM-DD, inclusive). */
                start?: string;
                /** @description The last day listed (UTC, YYYY-MM-DD, inclusive). */
                end?: string;
                /** @description How many files to return. An integer from 1 to 1000; default 100. */
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400. */
                cursor?: string;
            };
            header?: {
                /** @description An ETag from an earlier response; when it still matches, the answer is 304 with no body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. `Cache-Control: public, max-age=30`; a strong `ETag` identifies the body. */
            200: {
                headers: {
                    /** @description public, max-age=30 */
                    "Cache-Control"?: "public, max-age=30";
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExportListResponse"];
                };
            };
            /** @description Not modified: the `If-None-Match` request header matched the current `ETag`. No body. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    openStream: {
        parameters: {
            query?: {
                /**
                 * @description Comma list of message types to receive: price, score, settlement, call, trade; absent or empty means all. An unknown topic is a 400 naming it. Case-insensitive.
                 * @example price,call
                 */
                topics?: string;
                /**
                 * @description Comma list of event slugs (at most 100): only messages about those events. Absent means every event. A `score` message of a match no event is known for yet has no slug and is sent only without this filter.
                 * @example epl-ars-che-2025-11-22
                 */
                events?: string;
                /**
                 * @description Comma list of market ids (at most 100): only messages about those markets. Absent means every market. Given with `events`, a message passes when it matches either list; a `score` message has no market and passes only by its event.
                 * @example 540816
                 */
                markets?: string;
                /**
                 * @description Resume after this id, as the `Last-Event-ID` header does (the header wins when both are given; EventSource sends it by itself on reconnect). Every message after it that is still retained is sent first, then live ones, with no gap. An id older than the retention window (at least 10 minutes) or not from this stream gets `event: reset`, then live messages. A malformed id is a 400.
                 * @example 1732492800000-0
                 */
                last_event_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream: `Content-Type: text/event-stream`, `Cache-Control: no-store`. Messages by `event:` name: `price` → StreamPrice, `score` → StreamScore, `settlement` → StreamSettlement, `call` → StreamCall, `trade` → StreamTrade, `reset` → StreamReset. */
            200: {
                headers: {
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example id: 1732492800000-0
                     *     event: price
                     *     data: {"event":"epl-ars-che-2025-11-22","market_id":"540060","outcome_index":0,"outcome":"Yes","chance":0.535,"at":"2025-11-22T15:04:05.000Z"}
                     */
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
        };
    };
    getExportFile: {
        parameters: {
            query?: never;
            header?: {
                /** @description One range of bytes, e.g. `bytes=1048576-`: answered 206 with that part. */
                Range?: string;
                /** @description The ETag: the range is sent only if the file is still that one (else the whole file). */
                "If-Range"?: string;
                /** @description The ETag of a copy held: 304 with no body when it is this file. */
                "If-None-Match"?: string;
            };
            path: {
                /**
                 * @description The UTC day, YYYY-MM-DD
                 * @example 2026-11-30
                 */
                date: string;
                /**
                 * @description `<dataset>.<format>`: dataset candles, trades, markets, calls or combos; format parquet or ndjson.gz
                 * @example candles.parquet
                 */
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The whole file. */
            200: {
                headers: {
                    /** @description public, max-age=31536000, immutable */
                    "Cache-Control"?: "public, max-age=31536000, immutable";
                    /** @description The file's SHA-256 (lowercase hex), quoted: the manifest's `sha256` */
                    ETag?: string;
                    /** @description bytes */
                    "Accept-Ranges"?: "bytes";
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/vnd.apache.parquet": string;
                    "application/gzip": string;
                };
            };
            /** @description The part of the file the `Range` asked for (`Content-Range` says which). */
            206: {
                headers: {
                    /** @description public, max-age=31536000, immutable */
                    "Cache-Control"?: "public, max-age=31536000, immutable";
                    /** @description The file's SHA-256 (lowercase hex), quoted: the manifest's `sha256` */
                    ETag?: string;
                    /** @description bytes */
                    "Accept-Ranges"?: "bytes";
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    /** @description bytes first-last/size */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/vnd.apache.parquet": string;
                    "application/gzip": string;
                };
            };
            /** @description Not modified: `If-None-Match` matched the ETag. */
            304: {
                headers: {
                    /** @description The file's SHA-256 (lowercase hex), quoted: the manifest's `sha256` */
                    ETag?: string;
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            /** @description The `Range` is past the end of the file (`Content-Range: bytes *\/size`). */
            416: {
                headers: {
                    "x-ratelimit-limit": components["headers"]["RateLimitLimit"];
                    "x-ratelimit-remaining": components["headers"]["RateLimitRemaining"];
                    "x-ratelimit-reset": components["headers"]["RateLimitReset"];
                    "x-request-id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
}
