package memory

// wording holds the fixed prompt texts of one language.
type wording struct {
	previouslyHeader string
	conventions      string
	sceneHeader      string
}

var wordings = map[string]wording{
	"en": {
		previouslyHeader: "[Previously] What happened before this point, condensed by the story's scribe. All of it has already happened and is settled fact:",
		conventions: "How the messages below are laid out: if the first user message starts with [Previously], it condenses the earlier story " +
			"(and what is remembered from earlier chats with this user). Treat it as settled fact, pick the story up from its current scene, " +
			"and never quote it or speak about it. A [Recalled] block holds older passages that may bear on the moment. " +
			"Everything after that is the live conversation.",
		sceneHeader: "[Now] The scene as you know it at this moment:",
	},
	"zh": {
		previouslyHeader: "【前情提要】此前的剧情已由场记整理如下，所述之事都已发生，是定论：",
		conventions: "消息排布说明：若第一条用户消息以【前情提要】开头，它浓缩了此前的剧情（以及与这位用户更早几局里记下的事），" +
			"请当作已成定论的事实，从其中的当前场景接着往下演，不要复述或谈论这份提要本身。【旧事回想】里是可能与眼下相关的旧段落。" +
			"此后的消息才是正在进行的对话。",
		sceneHeader: "【此刻】你所知道的眼下情形：",
	},
}

func wordingFor(lang string) wording {
	if w, ok := wordings[lang]; ok {
		return w
	}
	return wordings["en"]
}
