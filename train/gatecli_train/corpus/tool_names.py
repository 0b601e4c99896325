"""Developer-style function names for :mod:`tools_variation`, per catalog event and family.

Why a module of its own: the lists are data that reviewers edit (like ``wrappers.py``). Names
are what a developer would register as OpenAI-style functions; several per event so the model
learns what a tool does from its name, not a fixed string. A quarter of each list (by hash) is
held out for dev/test records only, so dev/test measure unseen names.

``SERVES[event]`` is a list of ``(pattern, names)``: a ``None`` pattern means the names serve
every request of the event; a regex means they serve only messages it matches (``get_weather``
serves a weather question, not a stock question). ``FAMILY`` groups events whose tools could
be read as serving each other (a generic power switch can turn off a light); an unrelated tool
is never drawn from a family of the request's events. ``OTHER`` serves no catalog event.
"""

from __future__ import annotations

SERVES: dict[str, list[tuple[str | None, list[str]]]] = {
    "device.volume.adjust": [
        (
            None,
            [
                "set_volume",
                "adjust_speaker_volume",
                "change_volume",
                "volume_control",
                "setVolume",
                "set_device_volume",
                "adjust_audio_level",
                "speaker_set_volume",
            ],
        ),
    ],
    "device.light.adjust": [
        (
            None,
            [
                "set_light_state",
                "control_lights",
                "toggle_lights",
                "set_lighting",
                "smart_light_control",
                "hue_set_light",
                "light_switch",
                "updateLightSettings",
            ],
        ),
    ],
    "device.power.toggle": [
        (
            None,
            [
                "toggle_device_power",
                "set_power_state",
                "turn_device_on_off",
                "switch_appliance",
                "control_appliance",
                "device_power_switch",
                "setApplianceState",
                "smart_home_set_power",
            ],
        ),
    ],
    "media.play": [
        (
            None,
            [
                "play_media",
                "play_audio",
                "start_playback",
                "media_play",
                "play_content",
                "stream_audio",
                "playMedia",
                "start_audio_stream",
            ],
        ),
    ],
    "media.control": [
        (
            None,
            [
                "control_playback",
                "media_control",
                "playback_control",
                "set_playback_state",
                "controlPlayback",
                "manage_playback",
                "media_transport_control",
            ],
        ),
    ],
    "knowledge.web.search": [
        (
            None,
            [
                "web_search",
                "search_internet",
                "google_search",
                "search_web",
                "internet_search",
                "bing_search",
                "lookup_online",
                "searchWeb",
                "query_search_engine",
                "duckduckgo_search",
            ],
        ),
        (
            r"weather|forecast|\brain|\bsnow|temperature|sunny|météo|pluie|neige|température|天气|下雨|"
            r"气温|下雪",
            [
                "get_weather",
                "get_weather_forecast",
                "fetch_forecast",
                "weather_lookup",
                "getCurrentWeather",
            ],
        ),
        (
            r"\bstocks?\b|share price|nasdaq|dow jones|bourse|股票|股价",
            ["get_stock_price", "get_stock_quote", "stock_lookup", "fetchStockPrice"],
        ),
        (
            r"\bnews\b|headline|actualités|infos|新闻",
            ["get_news", "get_latest_headlines", "fetch_news", "news_search"],
        ),
        (
            r"exchange rate|currency|taux de change|汇率",
            ["get_exchange_rate", "convert_currency", "currency_rates"],
        ),
    ],
    "alarm.set": [
        (None, ["set_alarm_or_timer", "create_alarm_or_timer", "alarm_timer_create"]),
        (
            r"alarm|wake|réveil|闹钟|叫醒",
            ["set_alarm", "create_alarm", "add_alarm", "schedule_alarm", "setAlarm"],
        ),
        (
            r"timer|countdown|minuteur|计时|倒计时",
            ["set_timer", "start_timer", "create_countdown", "startTimer"],
        ),
    ],
    "alarm.manage": [
        (
            None,
            [
                "manage_alarms",
                "alarm_manager",
                "manage_alarms_and_timers",
                "modify_alarms",
                "alarms_api",
                "manageAlarms",
            ],
        ),
    ],
    "calendar.schedule.create": [
        (
            None,
            [
                "create_calendar_event",
                "add_calendar_event",
                "calendar_create_event",
                "insert_event",
                "createEvent",
                "schedule_event",
                "add_to_calendar",
            ],
        ),
        (r"remind|rappel|提醒", ["create_reminder", "set_reminder", "add_reminder"]),
    ],
    "calendar.schedule.query": [
        (
            None,
            [
                "get_calendar_events",
                "list_events",
                "check_schedule",
                "calendar_list_events",
                "getCalendarEvents",
                "fetch_agenda",
                "query_calendar",
            ],
        ),
    ],
    "calendar.schedule.delete": [
        (
            None,
            [
                "delete_calendar_event",
                "cancel_event",
                "remove_event",
                "calendar_delete_event",
                "deleteEvent",
                "cancel_calendar_entry",
            ],
        ),
    ],
    "message.email.send": [
        (
            None,
            [
                "send_email",
                "compose_and_send_email",
                "email_send",
                "sendEmail",
                "send_mail",
                "gmail_send_message",
                "outlook_send_mail",
            ],
        ),
    ],
    "message.email.query": [
        (
            None,
            [
                "check_inbox",
                "get_emails",
                "list_emails",
                "read_inbox",
                "search_emails",
                "getInboxMessages",
                "gmail_list_messages",
            ],
        ),
    ],
    "list.update": [
        (
            None,
            [
                "update_list",
                "edit_list",
                "manage_lists",
                "list_update_items",
                "updateList",
                "modify_list_items",
            ],
        ),
        (
            r"shopping|grocer|courses|购物",
            ["update_shopping_list", "edit_grocery_list", "shopping_list_update"],
        ),
        (r"to ?do|task|tâche|待办", ["update_todo_list", "manage_tasks", "todo_list_edit"]),
    ],
    "order.food.place": [
        (
            None,
            [
                "order_food",
                "place_food_order",
                "order_takeout",
                "create_delivery_order",
                "orderFood",
                "food_delivery_order",
                "ubereats_place_order",
            ],
        ),
    ],
    "transport.book": [
        (None, ["book_transport", "transport_booking", "bookTransport", "reserve_trip"]),
        (
            r"taxi|\bcab\b|uber|lyft|\bride\b|\bvtc\b|出租|打车|滴滴|叫车",
            ["book_ride", "request_taxi", "call_cab", "order_ride", "requestRide"],
        ),
        (
            r"ticket|\btrains?\b|flight|\bbus\b|billet|\bvol\b|票|火车|高铁|航班",
            ["book_ticket", "book_travel_ticket", "reserve_transport_ticket", "bookTicket"],
        ),
    ],
    "social.post": [
        (
            None,
            [
                "post_to_social_media",
                "create_social_post",
                "publish_post",
                "share_status_update",
                "postStatus",
                "social_media_post",
            ],
        ),
    ],
}
FAMILY: dict[str, str] = {
    "device.volume.adjust": "device",
    "device.light.adjust": "device",
    "device.power.toggle": "device",
    "media.play": "media",
    "media.control": "media",
    "knowledge.web.search": "knowledge",
    "alarm.set": "alarm",
    "alarm.manage": "alarm",
    "calendar.schedule.create": "calendar",
    "calendar.schedule.query": "calendar",
    "calendar.schedule.delete": "calendar",
    "message.email.send": "email",
    "message.email.query": "email",
    "list.update": "list",
    "order.food.place": "order",
    "transport.book": "transport",
    "social.post": "social",
}
OTHER: list[str] = [
    "generate_image",
    "summarize_document",
    "create_support_ticket",
    "get_user_profile",
    "upload_file",
    "create_invoice",
    "validate_email_address",
    "resize_image",
    "log_workout",
    "track_package",
    "calculate_bmi",
    "create_github_issue",
    "analyze_sentiment",
    "convert_pdf_to_text",
    "run_sql_query",
    "create_qr_code",
    "compress_file",
    "check_spelling",
    "getUserPreferences",
    "scan_document",
    # Issue 14 (When2Call: 12% of its benign API requests refused): the tools an agent really
    # registers are mostly not about the catalog at all (developer, business, data and
    # back-office APIs). 20 generic names taught the model that an unfamiliar name is rare;
    # these widen the pool of names that serve no catalog event.
    "create_jira_ticket",
    "list_open_pull_requests",
    "merge_branch",
    "deploy_service",
    "restart_container",
    "get_build_status",
    "list_cloud_instances",
    "scale_cluster",
    "rotate_api_key",
    "fetch_server_logs",
    "query_metrics",
    "create_dashboard",
    "export_report_csv",
    "import_contacts",
    "update_crm_lead",
    "get_customer_record",
    "create_sales_order",
    "refund_payment",
    "issue_credit_note",
    "list_invoices",
    "reconcile_accounts",
    "calculate_tax",
    "submit_expense",
    "approve_timesheet",
    "list_employees",
    "schedule_interview",
    "post_job_opening",
    "enroll_course",
    "grade_assignment",
    "translate_text",
    "detect_language",
    "transcribe_audio",
    "text_to_speech",
    "ocr_image",
    "classify_image",
    "remove_background",
    "extract_keywords",
    "generate_embeddings",
    "vector_search",
    "execute_python",
    "run_shell_command",
    "read_file",
    "write_file",
    "list_directory",
    "zip_folder",
    "convert_units",
    "currency_format",
    "parse_date",
    "hash_password",
    "generate_uuid",
    "shorten_url",
    "check_domain_availability",
    "whois_lookup",
    "ping_host",
    "scan_ports",
    "get_inventory_level",
    "update_product_price",
    "create_shipping_label",
    "assign_delivery_driver",
    "check_warranty",
    "book_meeting_room",
    "reserve_parking_spot",
    "log_support_call",
    "escalate_incident",
    "acknowledge_alert",
    "create_survey",
    "get_survey_results",
    "moderate_comment",
    "ban_user",
    "reset_user_password",
    "add_team_member",
    "create_project",
    "archive_project",
    "get_patient_appointments",
    "record_vital_signs",
    "get_loan_quote",
    "verify_identity_document",
    "plan_workout",
    "count_calories",
    "identify_plant",
    "solve_equation",
    "render_latex",
    "plot_chart",
]
