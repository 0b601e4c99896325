"""Word lists for :mod:`context`: account display forms, unrelated accounts, the assistant's
slot questions and its replies to a safety turn, in en, zh and fr.

Kept apart from the code (like ``wrappers.py`` and ``tool_names.py``) because reviewers edit
these lists. Every account form is checked against the catalog before use, so a form the
catalog does not know is simply never drawn.
"""

from __future__ import annotations

import random
import re

# Catalog alias -> how people write it in a settings screen or an integration config.
DISPLAY: dict[str, list[str]] = {
    "google_calendar": ["Google Calendar", "google-calendar", "GoogleCalendar"],
    "gcal": ["GCal"],
    "outlook_calendar": ["Outlook Calendar", "outlook-calendar"],
    "icloud": ["iCloud"],
    "icloud_calendar": ["iCloud Calendar"],
    "apple_calendar": ["Apple Calendar"],
    "office_365": ["Office 365"],
    "microsoft_365": ["Microsoft 365"],
    "yahoo_calendar": ["Yahoo Calendar"],
    "zoho_calendar": ["Zoho Calendar"],
    "feishu_calendar": ["Feishu Calendar", "飞书日历"],
    "lark_calendar": ["Lark Calendar"],
    "dingtalk_calendar": ["DingTalk Calendar", "钉钉日历"],
    "wecom_calendar": ["WeCom Calendar", "企业微信日历"],
    "agenda_google": ["Agenda Google"],
    "calendrier": ["Calendrier"],
    "gmail": ["Gmail", "GMail", "gmail.com"],
    "google_mail": ["Google Mail"],
    "outlook_mail": ["Outlook Mail"],
    "outlook_com": ["Outlook.com"],
    "hotmail": ["Hotmail"],
    "icloud_mail": ["iCloud Mail"],
    "apple_mail": ["Apple Mail"],
    "yahoo_mail": ["Yahoo Mail", "Yahoo! Mail"],
    "proton_mail": ["Proton Mail", "ProtonMail"],
    "fastmail": ["Fastmail"],
    "qq_mail": ["QQ Mail", "QQ邮箱"],
    "netease_mail": ["NetEase Mail", "网易邮箱"],
    "163_mail": ["163 Mail", "163邮箱"],
    "126_mail": ["126邮箱"],
    "foxmail": ["Foxmail"],
    "courriel": ["Courriel"],
    "orange_mail": ["Orange Mail", "Mail Orange"],
    "laposte_mail": ["La Poste Mail"],
    "twitter": ["Twitter", "twitter.com"],
    "x": ["X"],
    "x_twitter": ["X (Twitter)", "X-Twitter"],
    "facebook": ["Facebook"],
    "instagram": ["Instagram"],
    "linkedin": ["LinkedIn"],
    "mastodon": ["Mastodon"],
    "threads": ["Threads"],
    "bluesky": ["Bluesky"],
    "reddit": ["Reddit"],
    "tiktok": ["TikTok"],
    "weibo": ["Weibo", "微博"],
    "sina_weibo": ["Sina Weibo", "新浪微博"],
    "wechat_moments": ["WeChat Moments", "微信朋友圈"],
    "xiaohongshu": ["Xiaohongshu", "小红书"],
    "douyin": ["Douyin", "抖音"],
    "social_media": ["Social media"],
}

# Accounts that satisfy no catalog system (checked by the catalog before use).
UNRELATED_ACCOUNTS = [
    "spotify", "Slack", "notion", "GitHub", "Dropbox", "uber", "Netflix", "WhatsApp",
    "alipay", "支付宝", "钉钉", "美团", "deliveroo", "Lydia", "doctolib", "trello", "Zoom",
    "strava", "Google Drive", "OneDrive", "telegram", "hubspot", "jira", "Deezer", "微信",
    "淘宝", "高德地图", "Philips Hue", "sonos", "Airbnb",
]  # fmt: skip

# The assistant's question for a missing slot, by language; event-specific ones first.
QUESTIONS: dict[str, dict[str, list[str]]] = {
    "en": {
        "time": [
            "When?",
            "What time?",
            "For when?",
            "Sure, what day and time?",
            "What time works for you?",
        ],
        "person": ["Who's it for?", "Who do you mean?", "Which person?"],
        "place": ["Where to?", "Where are you headed?", "What's the destination?", "Which city?"],
        "item": ["What exactly?", "Which one?", "What item?"],
        "target": ["Which one?", "Which one do you mean?", "Which device?"],
        "amount": ["How many?", "How much?", "How many do you need?"],
        "content": ["What should it say?", "What do you want to write?", "What's the message?"],
    },  # fmt: skip
    "fr": {
        "time": [
            "Pour quand ?",
            "C'est pour quelle heure ?",
            "Quel jour et à quelle heure ?",
            "Tu veux ça pour quand ?",
            "Quand ça ?",
        ],
        "person": ["C'est pour qui ?", "Qui ça ?", "Quelle personne ?"],
        "place": ["Pour aller où ?", "Quelle destination ?", "Tu vas où ?", "Dans quelle ville ?"],
        "item": ["Quoi exactement ?", "Lequel ?", "C'est quoi exactement ?"],
        "target": ["Lequel ?", "Tu parles duquel ?", "Quel appareil ?"],
        "amount": ["Combien ?", "Tu en veux combien ?", "Quelle quantité ?"],
        "content": [
            "Je mets quoi dans le message ?",
            "Qu'est-ce que tu veux écrire ?",
            "Le message dit quoi ?",
        ],
    },  # fmt: skip
    "zh": {
        "time": ["什么时候？", "几点？", "哪天几点呢？", "要定在什么时间？", "你想约在什么时候？"],
        "person": ["是谁？", "哪位？", "是给谁的？"],
        "place": ["去哪里？", "目的地是哪儿？", "你要去哪？", "哪个城市？"],
        "item": ["具体是什么？", "哪一个？", "具体要哪个？"],
        "target": ["哪一个？", "你说的是哪个？", "哪个设备？"],
        "amount": ["要多少？", "几个？", "需要多少？"],
        "content": ["要写什么内容？", "消息里说什么？", "想写点什么？"],
    },
}
EVENT_QUESTIONS: dict[str, dict[tuple[str, str], list[str]]] = {
    "en": {
        ("alarm.set", "time"): [
            "What time do you want to get up?",
            "Which time?",
            "For what time?",
        ],
        ("timer", "time"): ["How long?", "For how long?", "How many minutes?"],
        ("calendar.schedule.create", "time"): [
            "When is it?",
            "What day and time?",
            "When should I put it in?",
        ],
        ("transport.book", "place"): ["Where do you want to go?", "Where should I book it to?"],
        ("order.food.place", "item"): ["What are you in the mood for?", "What should I order?"],
        ("message.email.send", "person"): ["Who should get it?", "Who's the email for?"],
        ("calendar.schedule.create", "person"): ["With whom?", "Who's joining?"],
        ("list.update", "item"): ["What should I add?", "What do you need?"],
    },  # fmt: skip
    "fr": {
        ("alarm.set", "time"): [
            "Tu veux te lever à quelle heure ?",
            "Pour quelle heure ?",
            "Je le règle sur quelle heure ?",
        ],
        ("timer", "time"): [
            "Pour combien de temps ?",
            "Combien de minutes ?",
            "Je le mets sur combien ?",
        ],
        ("calendar.schedule.create", "time"): [
            "C'est quand ?",
            "Je le cale quand ?",
            "Quel jour et à quelle heure ?",
        ],
        ("transport.book", "place"): ["Tu vas où ?", "Je réserve pour quelle destination ?"],
        ("order.food.place", "item"): ["Tu as envie de quoi ?", "Je commande quoi ?"],
        ("message.email.send", "person"): ["Je l'envoie à qui ?", "Le mail, c'est pour qui ?"],
        ("calendar.schedule.create", "person"): ["Avec qui ?", "Qui je mets dans l'invitation ?"],
        ("list.update", "item"): ["J'ajoute quoi ?", "Il te manque quoi ?"],
    },  # fmt: skip
    "zh": {
        ("alarm.set", "time"): ["想几点起？", "定几点的？", "要设在几点？"],
        ("timer", "time"): ["定多久？", "多长时间？", "几分钟？"],
        ("calendar.schedule.create", "time"): ["是什么时候？", "定在哪天几点？", "几点开始？"],
        ("transport.book", "place"): ["要去哪儿？", "目的地是哪里？"],
        ("order.food.place", "item"): ["想吃点什么？", "要点什么？"],
        ("message.email.send", "person"): ["发给谁？", "这封邮件给谁？"],
        ("calendar.schedule.create", "person"): ["跟谁？", "要约谁？"],
        ("list.update", "item"): ["要加什么？", "加点什么？"],
    },  # fmt: skip
}

# What an assistant says after a safety turn (the earlier turn of a later "thanks").
SUPPORT: dict[str, list[str]] = {
    "en": [
        "I'm really worried about what you're telling me. Please call your local emergency "
        "number now (911 in the US, 112 in Europe). I'm here with you.",
        "This sounds urgent. Please get help right away: call emergency services, or a crisis "
        "line if you're thinking of hurting yourself (988 in the US).",
        "Thank you for telling me. Please reach out to emergency services or someone nearby "
        "right now; you don't have to handle this alone.",
    ],
    "fr": [
        "Ce que tu décris m'inquiète beaucoup. Appelle tout de suite le 112 (ou le 15, le 17), "
        "ou le 3114 si tu penses à te faire du mal. Je reste là.",
        "C'est urgent : appelle les secours maintenant (112). Si tu es en danger, mets-toi à "
        "l'abri et préviens quelqu'un près de toi.",
        "Merci de m'en avoir parlé. Contacte les secours ou une personne proche dès maintenant, "
        "tu n'as pas à gérer ça seul·e.",
    ],
    "zh": [
        "你说的情况让我很担心。请马上拨打急救电话120或报警110；如果你有伤害自己的念头，也可以拨打心理援助热线。我在这里。",
        "这很紧急，请立刻求助：拨打120或110，并告诉身边的人。",
        "谢谢你告诉我。请现在就联系急救或身边的人，你不用一个人面对。",
    ],
}


_TIMER = re.compile(r"timer|minuteur|计时|倒计时|定时", re.I)


def question_for(
    slot: str, events: list[str], lang: str, rng: random.Random, request: str = ""
) -> str:
    """An assistant question for ``slot`` after ``request`` (event-specific when there is one;
    a timer is asked "how long?", not "what time?").

    Example:
        >>> question_for("time", ["alarm.set"], "en", random.Random(0), "set a timer")
        'For how long?'
    """
    keys = ["timer"] if "alarm.set" in events and _TIMER.search(request) else events
    pool = [q for e in keys for q in EVENT_QUESTIONS[lang].get((e, slot), [])]
    if keys == ["timer"]:
        return rng.choice(pool)
    return rng.choice(pool + QUESTIONS[lang].get(slot, QUESTIONS[lang]["target"]))
