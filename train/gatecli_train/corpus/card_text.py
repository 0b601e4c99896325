"""Hand-written part of the data card: mapping rules, augmentation, licences, hand check.

Kept as a module (not a .md) so the build can paste it below the generated tables.
"""

TEXT = r"""
## How labels were derived (mapping rules)

Heads a source says nothing about are `null` (masked in training), never `[]`. `[]` means
"known to be none". Tables of every rule: `gatecli_train/corpus/intent_maps.py`
(HWU64, SLURP, CLINC,
SNIPS, xSID), `home_assistant.py` (HA intents), `dialogue.py` (SGD/CrossWOZ slot and intent
maps), `safety_sets.py`, `eval_suites.py`.

- **HWU64 (KFold_1 trainset), SLURP (devel)**: `scenario_intent` -> event: audio_volume_* ->
  device.volume.adjust; iot_hue_* -> device.light.adjust; iot_wemo_*, iot_cleaning, iot_coffee ->
  device.power.toggle; play_music/radio/podcasts/audiobook -> media.play; music_settings ->
  media.control; weather_query, news_query, qa_factoid/stock/currency, recommendation_*,
  transport_query/traffic -> knowledge.web.search; alarm_set -> alarm.set; alarm_query/remove ->
  alarm.manage; calendar_set/query/remove -> calendar.schedule.create/query/delete;
  email_sendemail/query -> message.email.send/query; lists_createoradd/remove -> list.update;
  takeaway_order -> order.food.place; transport_taxi/ticket -> transport.book; social_post ->
  social.post (see text refinements). No catalog event (execute, `[]`): cooking, datetime,
  qa_definition, qa_maths, play_game, lists_query; general_joke/praise/greet -> chitchat;
  general_quirky -> chitchat only when plainly small talk (see text refinements). Masked events:
  general_commandstop, music_query/likeness/dislikeness. Not used (need the previous turn or an
  unseen account): general_affirm/negate/confirm/dontcare/repeat/explain, email_*contact,
  social_query, takeaway_query. Tags `[]` for plain requests.
- **Required slots** (catalog): if the bracket annotation lacks the slot (time: time/date/
  timeofday; person: person/relation/email_address; item: food_type/meal_type/business_name;
  place: place_name) the record is `ask`, events `[]`, missing_slots `[slot]`.
- **Slot removal** (HWU64/SLURP): when the required slot is a trailing phrase made only of the
  slot spans and fillers (for/at/to/on/in/the/a/...), it is cut ("set an alarm for 7am" -> "set
  an alarm") if >= 3 words remain and the rest does not end on a preposition/article; label ask +
  `[slot]`, same group as the original (id suffix `-noslot`).
- **Account-bound events** (calendar.*, message.email.*, social.post): the record gets a
  connected account (google_calendar / gmail / twitter, catalog aliases) and is execute with tag
  private_data; a second record (id suffix `-connect`) has the same message and events, no
  account, decision connect, tag private_data, same group.
- **CLINC150** (train + oos_train + oos_val, 60 per intent, seeded): alarm/timer -> alarm.set;
  reminder/schedule_meeting -> calendar.schedule.create; calendar/meeting_schedule ->
  calendar.schedule.query; weather/traffic/exchange_rate/flight_status/travel_alert/
  restaurant_suggestion/restaurant_reviews -> knowledge.web.search; play_music -> media.play;
  next_song ->
  media.control; change_volume -> device.volume.adjust; shopping/todo_list_update -> list.update;
  uber/book_flight -> transport.book; goodbye -> session.terminate + chitchat; small-talk intents
  -> chitchat; what_can_i_ask_you -> capability_question; banking/credit-card/HR/order-status
  intents -> connect + private_data; smart_home, calendar_update, reminder_update, order ->
  events masked; yes/no/maybe/cancel/repeat not used; oos -> execute, `[]`, tags masked; every
  other intent -> execute, `[]`. CLINC has no slot annotation: time/place presence for the
  required-slot rule is a conservative regex (digits, am/pm, weekdays, number words; "to/from").
- **Text refinements** (`gatecli_train/corpus/label_rules.py`, hand-check 2026; applied to HWU64,
  SLURP, CLINC, SNIPS and xSID, in this order, before the rules above; the record's id and
  group stay as they are and the note names the refinement):
  1. *Anaphora*: a single utterance without context whose referent is in an earlier turn
     ("what else …", "that one", "do it again", "the same one", "… on the list" outside list
     intents; zh 再来一次, 刚才那…) is **dropped** (no context to label it against).
  2. *social_post* -> social.post only with a post/tweet/share/status word or a network name
     (facebook, twitter, instagram, …); otherwise execute, `[]`, tag complaint, no connect
     variant (HWU64 files complaints to companies under social_post).
  3. *lists_query* with add/put/remove/delete/take off/cross off -> list.update.
     *general_quirky*: chitchat only when it is about the assistant or the user's mood and has
     no search word (find, search, show, deals, news, who won, tell me about, …); otherwise
     execute with events and tags masked (`null`). *qa_definition* (HWU64/SLURP) without a
     `definition_word` span -> ask, `[]`, missing_slots [content].
  4. *Statements*: calendar.schedule.create (calendar_set, CLINC reminder/schedule_meeting,
     xSID set_reminder) needs a scheduling cue (remind, add, schedule, set (up), book, put,
     create, make, note, arrange, plan, save, mark, block, reserve, let me know, don't forget,
     calendar, invite; zh 提醒, 安排, 添加, 设置/设定, 创建, 记下, 叫我, 预约, 日程, 日历…);
     without one -> execute, `[]`, tag statement (no connect or slot-removal variant).
  5. *Email without content*: message.email.send with a recipient span but no other slot and
     no content cue (about, saying, tell, let … know, that, with, regarding, thank, wish,
     invite, subject, ":") -> ask, `[]`, missing_slots [content], tag private_data (same id
     and group as before). Without a recipient the catalog rule (ask [person]) still applies.
- **SNIPS** (train_full, 700 per intent): GetWeather, SearchCreativeWork, SearchScreeningEvent ->
  knowledge.web.search; PlayMusic -> media.play; AddToPlaylist, BookRestaurant, RateBook ->
  execute `[]` (no catalog event). SNIPS validate (= its test) is not used.
- **xSID** dev (en, zh): weather/find -> knowledge.web.search; alarm/set_alarm -> alarm.set (ask
  [time] without a datetime slot); other alarm/* -> alarm.manage; reminder/set, cancel, show ->
  calendar.schedule.create/delete/query (+ connect variant); SNIPS intents as above. xSID test ->
  eval suite `xsid`.
- **Home Assistant**: templates in `sentences/<lang>/` (en, fr, zh-cn) parsed by hassil and
  expanded with a seeded random walk (4 samples per template, <= 60 per intent and domain),
  `{name}`/`{area}` filled from small per-language lists (lights, fans, TV, coffee machine,
  rooms), wildcards from small value lists. HassTurnOn/Off -> device.light.adjust (light domain)
  or device.power.toggle (fan, switch, vacuum, media_player, generic); HassLightSet ->
  device.light.adjust; HassSetVolume -> device.volume.adjust; HassMediaPause/Unpause/Next/
  Previous -> media.control; HassMediaSearchAndPlay -> media.play; HassStartTimer -> alarm.set;
  other timer intents -> alarm.manage; HassGetWeather -> knowledge.web.search; list intents ->
  list.update; vacuum intents -> device.power.toggle; time/date/climate/nevermind -> execute `[]`.
  Left out: cover, lock, valve, scene, script, HassBroadcast, HassRespond, HassSetPosition
  (no catalog event and higher impact); HassGetState templates (unnatural with made-up names).
  `tests/` -> eval suite `home_assistant` with the same map.
- **SGD** (dev + test subset, 2,000 ask + 2,000 execute, seeded): user turn whose next system
  act is REQUEST -> ask, events `[]`, missing_slots from the requested slots (time: dates/times;
  place: cities/locations; amount: counts, seats, amounts; person: recipient/doctor/stylist;
  item: category/genre/type/cuisine; target: restaurant/movie/song/hotel/... names; any unmapped
  slot -> masked), plus the active intent's `required_slots` (dev/test `schema.json`) that the
  dialogue state has not filled yet, where the slot maps to one of ours and no filled slot of
  any frame maps to the same name (so "I need a one way flight" asked for a date also lacks
  place). Next act OFFER/CONFIRM/INFORM/INFORM_COUNT -> execute; events from the active
  intent (Find*/Search*/GetWeather/LookupSong -> knowledge.web.search, PlaySong/PlayMovie ->
  media.play, AddAlarm -> alarm.set, GetAlarms -> alarm.manage, AddEvent/GetEvents ->
  calendar.*, GetRide/bus/flight/train tickets -> transport.book; restaurant/hotel/appointment/
  car bookings -> `[]`) only on the turn that states the intent (INFORM_INTENT), else masked.
  Banking services skipped. Up to 4 earlier turns are `conversation_context`; a dialogue is one
  group. Scenario tags masked.
- **CrossWOZ** (val + test, 4,000 seeded): its system never issues a Request act (0 in val), so
  no ask labels come from it; user task turns -> execute with knowledge.web.search (attraction,
  restaurant, hotel, metro) or transport.book (taxi); General-only turns -> chitchat, `bye` ->
  session.terminate. Tags masked on task turns.
- **Safety and other sets**: AdvBench harmful_behaviors -> refuse (events `[]`, tags masked,
  slots `[]`); HarmBench val standard+copyright behaviours -> refuse (contextual ones need the
  context passage: not used; test split -> eval); MultiJail en+zh -> refuse, self-harm-tagged
  prompts masked (maybe safety); coconot_pref -> **execute** (it holds the contrast prompts whose
  chosen answer complies; events/tags masked); Flames: only Non-anthropomorphism prompts ->
  execute `[]` (the rest are mostly legitimate advice questions with a trap: no reliable
  decision, not used); Qulac topics (198) -> ask, missing_slots [content]; BANKING77 (600 seeded
  from train) -> connect, private_data, events `[]`; NLU++ banking `why` sentences -> connect,
  private_data (hard negatives for ads_diagnosis_intent: not an ads context); NLU++ hotels not
  used.
- **Authored turns**: every `data/authored/*.jsonl` (and `--extra FILE`) goes through the same
  validation, dedup, split and leakage path, provenance `authored`; invalid rows are reported in
  the build output and dropped.

## Augmentation (provenance `augmented`)

Bases: mapped execute records with one account-free event, known tags `[]`, no context, in en,
fr, zh; xSID zh token spaces are removed before wrapping. Wrappers (lists in `wrappers.py`,
15-17 per kind and language; a hash of the wrapper id holds
out ~25% of them for dev/test only; a train wrapper only wraps train bases and a held-out one
only dev/test bases):
- capability questions ("can you …?", "tu sais … ?", "你能…吗") -> execute, `[]`,
  capability_question. Polite-request forms ("could you …?", "would you be able to …?",
  "tu pourrais … ?") are not used: they are requests and carry the event. A capability wrapper
  only takes an imperative base: en starting with a command verb (turn, play, set, find, …), fr
  starting with an infinitive, zh starting with a command verb (打开, 设置, 播放, 查…) and no
  question word (什么, 怎么, 吗, 哪, 多少…); never a base with please/s'il te plaît/请 or a
  question mark. "de" before a vowel is elided in fr; outputs with leftover brackets, garbled fr
  articles (l'+consonant, "de les"), Latin words in zh or over-long text are dropped;
- hypotheticals ("if I asked you to …", "et si je te demandais de … ?", "假如我让你…") -> execute,
  `[]`, hypothetical;
- follow-ups ("oh, and …", "ensuite …", "对了，…") after a previous user request and an assistant
  "Done." -> execute, the base event, follow_up;
- two requests joined ("… and …", "… et …", "…，然后…") -> execute, both events, multi_intent.
Statements are not generated (rarely natural from commands). The note names the wrapper.

Tool-list variation (`tools_variation.py`, names in `tool_names.py`), so that the model reads
`available_tools` (spec §1; When2Call-style inputs): bases are mapped/authored execute records
with known, non-empty events (not session.terminate, which needs no tool) and no tool list;
a seeded sample balanced round-robin over event sets (up to 2,500 en, 600 zh, 500 fr). Each
sampled record gets two variants in its own group (so the same split), same message, context
and accounts:
- `tools.offered`: a shuffled list of 2-6 OpenAI-style function names, one serving each event
  (`set_volume`, `adjust_speaker_volume` for device.volume.adjust; `web_search`,
  `search_internet`, and `get_weather` only for a weather question, `get_stock_price` only for a
  stock question, …), the rest unrelated -> same labels (execute, same events);
- `tools.missing`: 2-6 unrelated names -> decision `connect` ("needed tool not offered"),
  events, tags and slots unchanged.
Unrelated names never come from a family of the request's events (device, media, knowledge,
alarm, calendar, email, list, order, transport, social: a power switch could serve a light)
and may be generic non-catalog tools (`generate_image`, `create_invoice`, …). Plain answers
(chitchat tag, or CLINC/HWU64/SLURP definition, maths, calculator, recipe, joke, praise, fun
fact, spelling intents; up to 520 en, 200 zh, 80 fr) get `tools.plain`: unrelated tools ->
still execute, no event. Tool names are English identifiers in every language. A hashed
quarter of each name list is used only for dev/test records, the rest only for train
records. The note names the rule (`tools.offered|missing|plain`) and the original id.

## Splits, dedup, leakage

Split by a hash of the group key (85 / 7.5 / 7.5); groups that share a normalised message are
merged first. Normalised text = NFKC, casefold, no punctuation/symbols/spaces. Exact duplicates
(message + context + accounts + tools) are dropped; records whose message occurs in an eval suite
are dropped before splitting; the build fails if any train message still occurs in dev, test or
an eval suite. Intent test splits (HWU64 testset, CLINC test, SNIPS validate, SLURP test) are not
read. xsafety is not used at all (README: research use only).

## Eval suites (`data/eval/`, split eval_only)

when2call (tool_call -> execute, request_for_info -> ask, cannot_answer -> connect; tools as
available_tools; original label in note); xstest (safe -> execute, unsafe -> refuse; type in
note); coconot (eval: safety concerns -> refuse, underspecified/incomprehensible -> ask, modality
and style limitations -> refuse, false presuppositions/temporal/indeterminate/humanizing ->
execute; contrast -> execute); simple_safety_tests (Suicide, Self-Harm and Eating Disorders ->
safety; every other harm area -> refuse); harmbench (test split -> refuse; contextual rows
prefixed with their context); home_assistant (tests en/fr/zh-cn); xsid (test en/zh); seeds
(copy of data/suites/seeds.jsonl).

## Licences and attribution

| source | licence | note |
|---|---|---|
| HWU64 (Liu et al. 2019) | CC BY 4.0 | |
| CLINC150 (Larson et al. 2019) | CC BY 3.0 | |
| SNIPS (Coucke et al. 2018) | CC0 1.0 | |
| SLURP (Bastianelli et al. 2020) | CC BY 4.0 (text) | |
| xSID (van der Goot et al. 2021) | **CC BY-SA 4.0** | derived records stay CC BY-SA 4.0 |
| SGD (Rastogi et al. 2020) | **CC BY-SA 4.0** | derived records stay CC BY-SA 4.0 |
| Home Assistant intents | CC BY 4.0 | |
| CrossWOZ (Zhu et al. 2020) | Apache 2.0 | |
| BANKING77, NLU++ (PolyAI) | CC BY 4.0 | |
| Qulac (Aliannejadi et al. 2019) | MIT | |
| CoCoNot (AI2) | MIT | |
| AdvBench (Zou et al. 2023) | MIT | |
| HarmBench (CAIS) | MIT | |
| MultiJail (DAMO) | MIT | |
| Flames (AIFlames) | Apache 2.0 | |
| When2Call (NVIDIA) | Apache 2.0 | eval only |
| XSTest (Röttger et al.) | CC BY 4.0 | eval only |
| SimpleSafetyTests (Vidgen et al.) | CC BY 4.0 | eval only |

Upstream commits and file lists: `shared/datasets/<name>/PROVENANCE.md`. Because records from
xSID and SGD are CC BY-SA 4.0, a published corpus that contains them is CC BY-SA 4.0 as a whole
(or ship them as a separate file).

## Hand check

200 records drawn at random (seed 2026) from all three splits of the corpus as first built
(158 mapped, 27 authored, 15 augmented; 162 en, 25 zh, 13 fr) were read one by one against the
spec: **17 had at least one wrong head, an error rate of 8.5% (95% Wilson interval
5.4%–13.2%)**; per head: decision 4.0%, events 6.0%, scenario_tags 5.2%, missing_slots 3.5%
(masked heads not counted). No safety or refuse label in the sample was wrong. Per
provenance: mapped 7.6%, augmented 20% (3/15, all capability wrappers), authored 7.4%.
The systematic patterns it found (capability wrappers on polite requests, HWU64
social_post complaints, intent-map gaps, statements mapped to calendar creation, anaphoric
utterances, "email tom" without content, SGD requests naming only one missing slot) are
fixed by the "Text refinements" rules above; the corpus in this folder is the fixed one,
so its error rate should be lower than the sample's, but it has not been re-sampled yet.
Per-record verdicts: `data/handcheck/sample-200.jsonl`; the analysis:
`data/handcheck/README.md`. Known open points: SNIPS BookRestaurant vs SGD
ReserveRestaurant label restaurant booking differently; French Home Assistant templates
expand to some ungrammatical sentences ("l' minuteurs").
"""
