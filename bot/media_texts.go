package bot

// mediaMsg names a text of inbound media: the lines stored for attachments,
// the notices that refuse them, the caption prompt.
type mediaMsg int

const (
	mediaSomeone mediaMsg = iota
	mediaSentImage
	mediaSentVoice
	mediaSentAudio
	mediaAPicture
	mediaAVoiceNote
	mediaAnAudio
	mediaATextFile
	mediaCut
	mediaNoVision
	mediaNoSTT
	mediaRefused
	mediaWhyTooMany
	mediaWhyTooLarge
	mediaWhyTooLongText
	mediaWhyNotPicture
	mediaWhyTooManyPixels
	mediaWhyNotText
	mediaWhyNotAllowed
	mediaWhyDownload
	mediaWhyTimeout
	mediaWhyNoCaption
	mediaWhyNoTranscript
	mediaCaptionSystem
	mediaCaptionAsk
)

var mediaTexts = map[string]map[mediaMsg]string{
	"en": {
		mediaSomeone:          "Someone",
		mediaSentImage:        "[%s sent an image: %s]",
		mediaSentVoice:        "[%s sent a voice note]",
		mediaSentAudio:        "[%s sent an audio file: %s]",
		mediaAPicture:         "a picture",
		mediaAVoiceNote:       "a voice note",
		mediaAnAudio:          "an audio file",
		mediaATextFile:        "a text file",
		mediaCut:              "[the rest of the file was cut]",
		mediaNoVision:         "Pictures aren't seen here: no vision model is configured, so the character only learns that you sent one.",
		mediaNoSTT:            "Voice notes aren't heard here: no speech-to-text endpoint is configured, so the character only learns that you sent one.",
		mediaRefused:          "%s was left out: %s.",
		mediaWhyTooMany:       "a message may carry at most %d pictures (and as many other files)",
		mediaWhyTooLarge:      "it is larger than %d MB",
		mediaWhyTooLongText:   "it holds far more than %d characters",
		mediaWhyNotPicture:    "it is not a picture troupe can read",
		mediaWhyTooManyPixels: "the picture has too many pixels to open",
		mediaWhyNotText:       "it is not plain text",
		mediaWhyNotAllowed:    "troupe downloads only from the platform's own file host",
		mediaWhyDownload:      "the download failed",
		mediaWhyTimeout:       "it took too long",
		mediaWhyNoCaption:     "the picture could not be described (the vision model failed), so the character only learns that you sent it",
		mediaWhyNoTranscript:  "it could not be transcribed (the speech-to-text endpoint failed), so the character only learns that you sent it",
		mediaCaptionSystem: "You describe pictures for someone who cannot see them. Say in one or two plain sentences what is visible: " +
			"people, creatures, objects, the place, colours, and any text in the picture, quoted exactly. Describe only what is there; " +
			"do not guess at stories, names or feelings, and do not address anyone.",
		mediaCaptionAsk: "Describe this picture.",
	},
	"zh": {
		mediaSomeone:          "有人",
		mediaSentImage:        "[%s 发来一张图片：%s]",
		mediaSentVoice:        "[%s 发来一条语音]",
		mediaSentAudio:        "[%s 发来一个音频文件：%s]",
		mediaAPicture:         "一张图片",
		mediaAVoiceNote:       "一条语音",
		mediaAnAudio:          "一个音频文件",
		mediaATextFile:        "一个文本文件",
		mediaCut:              "[文件其余部分已截去]",
		mediaNoVision:         "这里看不到图片：没有配置识图模型，角色只会知道你发了一张图。",
		mediaNoSTT:            "这里听不到语音：没有配置语音转文字服务，角色只会知道你发了一条语音。",
		mediaRefused:          "%s 没有采用：%s。",
		mediaWhyTooMany:       "一条消息最多带 %d 张图片（其他文件也最多这么多个）",
		mediaWhyTooLarge:      "文件超过 %d MB",
		mediaWhyTooLongText:   "文字远超 %d 字",
		mediaWhyNotPicture:    "troupe 读不出这张图片",
		mediaWhyTooManyPixels: "图片像素太多，无法打开",
		mediaWhyNotText:       "这不是纯文本",
		mediaWhyNotAllowed:    "troupe 只从平台自己的文件服务器下载",
		mediaWhyDownload:      "下载失败",
		mediaWhyTimeout:       "处理超时",
		mediaWhyNoCaption:     "识图模型出错，没能描述这张图片，角色只会知道你发了它",
		mediaWhyNoTranscript:  "语音转文字服务出错，没能听写，角色只会知道你发了它",
		mediaCaptionSystem: "你为看不见图片的人描述图片。用一两句平实的话说出画面里能看到的东西：人物、动物、物件、地点、颜色，" +
			"以及图中的文字（原样引出）。只描述画面上有的，不要猜测情节、名字或情绪，也不要对任何人说话。",
		mediaCaptionAsk: "请描述这张图片。",
	},
}

func (p *Pipeline) itext(lang string, key mediaMsg, args ...any) string {
	return Localized(mediaTexts, lang, key, args...)
}
